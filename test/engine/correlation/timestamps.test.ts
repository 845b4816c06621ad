// Test timestamps: integer minutes and RFC 3339 strings, each in its own exact unit, and the
// values that are neither (a test error naming the value).
import t from 'tap'
import { parseRfc3339, parseTimestamp } from '../../../src/engine/correlation/timestamps.js'

const EPOCH_MS_2026_11_20_08 = Date.UTC(2026, 10, 20, 8, 0, 0)

const valid: Array<[unknown, { kind: string; value: number }]> = [
  [0, { kind: 'minutes', value: 0 }],
  [-15, { kind: 'minutes', value: -15 }],
  ['2026-11-20T08:00:00Z', { kind: 'rfc3339', value: EPOCH_MS_2026_11_20_08 }],
  ['2026-11-20t08:00:00z', { kind: 'rfc3339', value: EPOCH_MS_2026_11_20_08 }],
  ['2026-11-20 08:00:00Z', { kind: 'rfc3339', value: EPOCH_MS_2026_11_20_08 }],
  ['2026-11-20T09:30:00+01:30', { kind: 'rfc3339', value: EPOCH_MS_2026_11_20_08 }],
  ['2026-11-20T07:00:00-01:00', { kind: 'rfc3339', value: EPOCH_MS_2026_11_20_08 }],
  ['2026-11-20T08:00:00.5Z', { kind: 'rfc3339', value: EPOCH_MS_2026_11_20_08 + 500 }],
  ['2026-11-20T08:00:00.123456789Z', { kind: 'rfc3339', value: EPOCH_MS_2026_11_20_08 + 123 }],
  ['2024-02-29T00:00:00Z', { kind: 'rfc3339', value: Date.UTC(2024, 1, 29) }],
  ['0001-01-01T00:00:00Z', { kind: 'rfc3339', value: -62135596800000 }],
]

for (const [raw, expected] of valid) {
  t.test(`${JSON.stringify(raw)} is a timestamp`, async (t) => {
    t.same(parseTimestamp(raw), expected)
  })
}

const invalid: Array<[unknown, string]> = [
  [1.5, '1.5 is not an integer number of minutes'],
  [1e13, '10000000000000 minutes is out of range (at most ±1000000000000)'],
  ['12', '"12" is neither an integer number of minutes nor an RFC 3339 timestamp'],
  ['2026-11-20', '"2026-11-20" is neither an integer number of minutes nor an RFC 3339 timestamp'],
  ['2026-11-20T08:00:00', '"2026-11-20T08:00:00" is neither an integer number of minutes nor an RFC 3339 timestamp'],
  ['2023-02-29T00:00:00Z', '"2023-02-29T00:00:00Z" is neither an integer number of minutes nor an RFC 3339 timestamp'],
  ['2026-13-01T00:00:00Z', '"2026-13-01T00:00:00Z" is neither an integer number of minutes nor an RFC 3339 timestamp'],
  ['2026-11-20T24:00:00Z', '"2026-11-20T24:00:00Z" is neither an integer number of minutes nor an RFC 3339 timestamp'],
  [
    '2026-11-20T08:00:00+25:00',
    '"2026-11-20T08:00:00+25:00" is neither an integer number of minutes nor an RFC 3339 timestamp',
  ],
  [null, 'null is not a timestamp (an integer number of minutes or an RFC 3339 string)'],
  [true, 'true is not a timestamp (an integer number of minutes or an RFC 3339 string)'],
]

for (const [raw, error] of invalid) {
  t.test(`${JSON.stringify(raw)} is not a timestamp`, async (t) => {
    t.same(parseTimestamp(raw), { error })
  })
}

t.test('a leap second reads as the next minute’s first second', async (t) => {
  t.equal(parseRfc3339('2016-12-31T23:59:60Z'), Date.UTC(2017, 0, 1))
})

t.test('malformed RFC 3339 layouts are refused', async (t) => {
  const bad = [
    '2026-11-20T08:00:00.Z',
    '2026-11-20T08:00:00+0100',
    '2026-11-20T08:00:00+01:00x',
    '2026-11-20T08:00:00Zx',
    '2026-11-20X08:00:00Z',
    '2026/11/20T08:00:00Z',
    '2026-11-20T08-00-00Z',
    '+2026-11-20T08:00:00Z',
    '2026-11-20T08:00:0aZ',
    '２０２６-11-20T08:00:00Z',
  ]
  for (const text of bad) t.equal(parseRfc3339(text), undefined, text)
  t.equal(parseRfc3339('2026-11-20T08:00:00.1+00:00'), Date.UTC(2026, 10, 20, 8) + 100)
  t.equal(parseRfc3339('2026-11-20T08:00:00.12Z'), Date.UTC(2026, 10, 20, 8) + 120)
})

t.test('RFC 3339 agrees with Date.parse on a sweep of valid instants', async (t) => {
  let mismatches = 0
  for (let ms = Date.UTC(1999, 0, 1); ms < Date.UTC(2031, 0, 1); ms += 7_777_777_777) {
    const iso = new Date(ms).toISOString()
    if (parseRfc3339(iso) !== ms) mismatches++
  }
  t.equal(mismatches, 0)
})
