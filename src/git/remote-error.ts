// How a fetch or push of the remote rules repository failed, in our own words, whatever the
// transport (smart HTTP: fetched with the git binary or isomorphic-git, pushed with isomorphic-git; a local repository through the git binary):
// the kind decides what the writer and the reconciler do next.

/**
 * - `unreachable`: no answer, or not a Git answer (retry later).
 * - `auth`: the credentials were refused (needs a person).
 * - `rejected`: the push lost a race: the branch moved on the remote (fetch, rebuild, push again).
 * - `refused`: the remote declined the update for good (a hook, branch protection): retrying is futile.
 */
export type RemoteFailure = 'unreachable' | 'auth' | 'rejected' | 'refused'

export class RemoteError extends Error {
  constructor(
    readonly kind: RemoteFailure,
    message: string,
    /** What the remote said, for the log only (sanitized, short); never shown to a caller. */
    readonly detail?: string,
  ) {
    super(message)
  }
}

/** A ref update refused because the ref moved under it (git receive-pack's words): worth a retry. */
export const LOST_RACE =
  /non-fast-forward|fetch first|failed to (update|lock)|cannot lock|unable to (update|lock)|stale info|but expected|is at [0-9a-f]+/i
/** A ref update the remote will keep refusing. */
export const REFUSED = /hook declined|protected branch|denied|deny|not allowed|permission|forbidden/i
