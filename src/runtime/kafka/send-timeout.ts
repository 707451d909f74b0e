/** Bounds a client call that may otherwise wait forever (an idempotent send retries without limit). */
export class KafkaTimeoutError extends Error {
  /** The operation may still complete later; retrying is safe because consumers are idempotent. */
  readonly retryable = true;
  /** The broker did not answer in time: the outbox relay backs off and keeps the row's attempts. */
  readonly unavailable = true;
  readonly code = 'KafkaTimeoutError';
  constructor(what: string, timeoutMs: number) {
    super(`${what} not acknowledged within ${timeoutMs} ms`);
    this.name = 'KafkaTimeoutError';
  }
}

/**
 * Resolves or rejects like `promise`, or rejects with `KafkaTimeoutError` after `timeoutMs`;
 * `onTimeout` runs at that moment, before anything awaiting the result resumes.
 */
export function withTimeout<T>(
  promise: Promise<T>,
  timeoutMs: number,
  what: string,
  onTimeout?: () => void,
): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout?.();
      reject(new KafkaTimeoutError(what, timeoutMs));
    }, timeoutMs);
  });
  // The abandoned promise may still reject later; that must not become an unhandled rejection.
  promise.catch(() => undefined);
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
