// The stderr line a child server (serve-entry.ts) writes once it listens, followed by its port.
export const LISTENING_MARK = 'rulekeeper-test-child-listening-on-port '
