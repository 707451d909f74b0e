/**
 * A runner's `onEvent` hook, called so that an observer can never break delivery: an exception it
 * throws is dropped (the delivery's outcome is already decided and counted in `metrics()`).
 */
export function safeObserver<E>(onEvent: ((event: E) => void) | undefined): (event: E) => void {
  if (onEvent === undefined) return () => undefined;
  return (event) => {
    try {
      onEvent(event);
    } catch {
      // An observer must not break consuming.
    }
  };
}
