// The statuses of an alert (alerts.md §2), on their own so that the API's checks and its OpenAPI
// document read them without loading grouping.
export const STATUSES = ['OPEN', 'TRIAGED', 'CLOSED', 'RESOLVED'] as const
export type AlertStatus = (typeof STATUSES)[number]
