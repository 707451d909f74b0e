/**
 * The in-process broker's options: the shared ones (delivery/runner-options.ts) and its own
 * section (retry delays, start, unroutable messages), resolved once.
 */
import type { RunnerCoreEvent } from '../delivery/runner-core.js';
import {
  OptionChecks,
  resolveDeliveryRunnerOptions,
  type DeliveryRunnerOptions,
  type ResolvedDeliveryRunnerOptions,
} from '../delivery/runner-options.js';

export interface InProcessBrokerOptions extends DeliveryRunnerOptions<RunnerCoreEvent> {
  /**
   * Delay before each retry, in ms: the n-th retry waits `retryDelaysMs[n-1]` (the last one
   * repeats). Default `[100, 1000, 5000]`; tests often pass `[0]`.
   */
  readonly retryDelaysMs?: readonly number[];
  /** Whether it delivers from construction (default) or only after `start()`. */
  readonly autoStart?: boolean;
  /**
   * What `publish` does with an event type nobody subscribes to: `'reject'` (default, as a
   * mandatory RabbitMQ publish: a retryable error, so the outbox keeps the row) or
   * `'accept'` (recorded in `published` only).
   */
  readonly unroutable?: 'reject' | 'accept';
}

export interface ResolvedInProcessBrokerOptions extends ResolvedDeliveryRunnerOptions<RunnerCoreEvent> {
  readonly retryDelaysMs: readonly number[];
  readonly autoStart: boolean;
  readonly unroutable: 'reject' | 'accept';
}

const DEFAULT_RETRY_DELAYS_MS = [100, 1000, 5000];

export function resolveInProcessBrokerOptions(
  options: InProcessBrokerOptions,
): ResolvedInProcessBrokerOptions {
  const checks = new OptionChecks('InProcessBroker');
  const retryDelaysMs = options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
  if (!Array.isArray(retryDelaysMs))
    checks.fail('retryDelaysMs', retryDelaysMs, 'an array of delays in ms');
  retryDelaysMs.forEach((delay, index) =>
    checks.nonNegativeNumber(`retryDelaysMs[${index}]`, delay, 0),
  );
  const shared = resolveDeliveryRunnerOptions(checks, options, retryDelaysMs.length + 1);
  // Each retry waits its delay: more than one attempt needs one.
  if (shared.maxAttempts > 1 && retryDelaysMs.length === 0)
    checks.fail('maxAttempts', shared.maxAttempts, '1 when retryDelaysMs is empty');
  if (options.autoStart !== undefined && typeof options.autoStart !== 'boolean')
    checks.fail('autoStart', options.autoStart, 'true or false');
  return {
    ...shared,
    retryDelaysMs,
    autoStart: options.autoStart ?? true,
    unroutable: checks.oneOf('unroutable', options.unroutable, ['reject', 'accept'], 'reject'),
  };
}
