/** Runs an observability hook; one that throws must not stop publishing or recording outcomes. */
export function observe(hook: () => void): void {
  try {
    hook();
  } catch {
    // Ignored on purpose: metrics are never worth a stuck outbox row.
  }
}
