/**
 * The timers seam every runner shares (`DeliveryRunnerOptions.timers`): the breaker's pauses,
 * reconnect delays (RabbitMQ's connector too), the in-process broker's retries and Kafka's
 * partition holds and commit retries are scheduled through it, so a test can drive them with
 * fake timers instead of waiting.
 */
export interface RunnerTimers {
  /** Calls `callback` after `ms`; returns a handle for `clearTimeout`. */
  setTimeout(callback: () => void, ms: number): unknown;
  /** Cancels a pending `setTimeout`. */
  clearTimeout(handle: unknown): void;
}

/** The process's own timers, the default. */
export const REAL_RUNNER_TIMERS: RunnerTimers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};
