// Where the stored events are. Without a shared events directory: `<data dir>/logs/`, written and
// read by this process. With `state.eventsDir`: one folder per replica (`<eventsDir>/<replica>/`,
// laid out as `logs/` is), each written by its replica alone and read by every replica. The names
// readers use for data files (detection's checkpoint, match locations, replay) are relative to
// `root`: in a shared directory they begin with the replica's folder.
import path from 'node:path'
import { listVisibleFolders } from '../dir-list.js'

export interface EventsLayout {
  /** What every data file name is relative to: `<data dir>/logs`, or the shared events directory. */
  root: string
  /** This replica's folder under `root`: '' (not shared), or its name. */
  own: string
  /** The folder this process writes (`root` + `own`). */
  ownRoot: string
  /** Whether `root` holds one folder per replica. */
  shared: boolean
}

export function eventsLayout(dataDir: string, shared: { dir: string; replica: string } | null): EventsLayout {
  if (!shared) {
    const root = path.join(dataDir, 'logs')
    return { root, own: '', ownRoot: root, shared: false }
  }
  const root = path.resolve(shared.dir)
  return { root, own: shared.replica, ownRoot: path.join(root, shared.replica), shared: true }
}

/** The layout the `state:` settings give (`state.eventsDir`, `state.replica`). */
export function eventsLayoutOf(dataDir: string, state: { eventsDir: string | null; replica: string }): EventsLayout {
  return eventsLayout(dataDir, state.eventsDir ? { dir: state.eventsDir, replica: state.replica } : null)
}

/** A data file name relative to this replica's folder, as the readers name it (relative to `root`). */
export function ownFileName(layout: EventsLayout, file: string): string {
  return layout.own ? `${layout.own}/${file}` : file
}

/** Whether a data file name (relative to `root`) is in this replica's folder. */
export function isOwnFile(layout: EventsLayout, file: string): boolean {
  return !layout.own || file.startsWith(`${layout.own}/`)
}

/**
 * The replica folders of a shared events directory (relative to it, sorted): every folder but
 * hidden ones and `_`-prefixed ones. None when the directory does not exist yet.
 */
export const replicaFolders = (root: string): Promise<string[]> => listVisibleFolders(root)
