// Sign in: the token is checked against `GET /whoami` (401: not a token of this server; any known
// token signs in, whatever its permissions) and kept in sessionStorage for this tab only.
import { api, session } from '../api.js'
import { field, h, message, replace } from '../dom.js'

export function signInView(main, note) {
  document.title = 'Sign in · rulekeeper'
  const token = h('input', { type: 'password', autocomplete: 'off', required: true, spellcheck: 'false' })
  const out = h('div', null, note ? message('error', note) : null)
  const form = h(
    'form',
    {
      class: 'sign-in',
      async onsubmit(e) {
        e.preventDefault()
        const t = token.value.trim()
        if (!t) return replace(out, message('error', 'Enter an API token.'))
        const r = await api('GET', '/whoami', { token: t })
        if (r.status === 401) {
          token.select()
          return replace(
            out,
            message('error', 'Wrong token: the server does not know it (or it expired or was revoked).'),
          )
        }
        session.signIn(t)
        const back = sessionStorage.getItem('rulekeeper.after-sign-in')
        sessionStorage.removeItem('rulekeeper.after-sign-in')
        const target = back && back !== '#/sign-in' ? back : '#/rules'
        // Signed in on the page's own address (a bookmark opened signed out): no hashchange would come.
        if (location.hash === target) window.dispatchEvent(new HashChangeEvent('hashchange'))
        else location.hash = target
      },
    },
    h('h1', { tabindex: '-1' }, 'Sign in'),
    h(
      'p',
      null,
      'Use an API token (rulekeeper token create). It is kept in this tab only, until you sign out or close it.',
    ),
    field('API token', token),
    h('button', { type: 'submit', class: 'primary' }, 'Sign in'),
    out,
  )
  replace(main, form)
  token.focus()
}
