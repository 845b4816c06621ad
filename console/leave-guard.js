// Unsaved edits are not lost by accident: a page with an editor registers a guard saying whether it
// has unsaved changes; leaving it within the console (a link, the back button, Sign out) asks for a
// confirmation first, and closing or reloading the tab gets the browser's own `beforeunload` prompt.

let guard = null

/** `fn()` answers true while the page has unsaved changes; one guard at a time (the page shown). */
export const setLeaveGuard = (fn) => {
  guard = fn
}
export const clearLeaveGuard = () => {
  guard = null
}
export const hasUnsavedChanges = () => Boolean(guard?.())

/** True when the page may be left: nothing unsaved, or the user confirmed leaving it. */
export function confirmLeave() {
  return !hasUnsavedChanges() || window.confirm('This page has unsaved changes. Leave it and lose them?')
}

window.addEventListener('beforeunload', (e) => {
  if (!hasUnsavedChanges()) return
  e.preventDefault()
  // Older browsers ask only when returnValue is set.
  e.returnValue = ''
})
