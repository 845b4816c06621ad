// The join values a scheduled correlation run reads from a stored signal: p_alert_context keys,
// dotted record paths, a key holding dots, non-string values as JSON, several fields as a tuple
// (JSON array, in the step's order), and a missing field joining nothing.
import t from 'tap'
import { fieldValue, joinValue } from '../../src/detect/correlation-signals.js'

const view = {
  user_email: 'dana@example.com',
  team_id: 4821,
  'odd.key': 'dotted',
  actor: { email: 'eli@example.com', tags: ['a', 'b'] },
  nothing: null,
  p_alert_context: { actor: 'dana@example.com', count: 3 },
}

t.test('field values', async (t) => {
  t.equal(fieldValue(view, 'p_alert_context.actor'), 'dana@example.com')
  t.equal(fieldValue(view, 'actor.email'), 'eli@example.com')
  t.equal(fieldValue(view, 'odd.key'), 'dotted', 'a key holding dots is read as it is')
  t.equal(fieldValue(view, 'actor.missing'), undefined)
  t.equal(fieldValue(view, 'user_email.length'), undefined, 'no walking into strings')
  t.equal(fieldValue(view, 'actor.toString'), undefined, 'own keys only')
})

t.test('join values', async (t) => {
  t.equal(joinValue(view, ['p_alert_context.actor']), 'dana@example.com')
  t.equal(joinValue(view, ['team_id']), '4821', 'a number compares as its JSON text')
  t.equal(joinValue(view, ['actor.tags']), '["a","b"]')
  t.equal(joinValue(view, ['p_alert_context.actor', 'team_id']), '["dana@example.com","4821"]', 'a tuple')
  t.equal(joinValue(view, ['team_id', 'p_alert_context.actor']), '["4821","dana@example.com"]', 'in the given order')
  t.equal(joinValue(view, ['nothing']), null, 'null joins nothing')
  t.equal(joinValue(view, ['p_alert_context.actor', 'missing']), null, 'one missing field: no join value')
})
