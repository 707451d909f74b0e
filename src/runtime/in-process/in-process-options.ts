/**
 * The in-process broker's options: the shared ones (delivery/runner-options.ts) and its own
 * section, `inProcess` (retry delays, start, unroutable messages), resolved once. The old shape,
 * those settings at the top level, is still accepted.
 */
import type { RunnerCoreEvent } from '../delivery/runner-core.js';
import {
  OptionChecks,
  resolveDeliveryRunnerOptions,
  transportSection,
  type DeliveryRunnerOptions,
  type ResolvedDeliveryRunnerOptions,
} from '../delivery/runner-options.js';

/** The in-process broker's own settings, grouped under `inProcess`. */
export interface InProcessSettings {
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

const IN_PROCESS_SETTINGS = [
  'retryDelaysMs',
  'autoStart',
  'unroutable',
] as const satisfies readonly (keyof InProcessSettings)[];

/** The shared options and the broker's settings in their own section. */
export interface GroupedInProcessBrokerOptions extends DeliveryRunnerOptions<RunnerCoreEvent> {
  /** The broker's own settings. */
  readonly inProcess?: InProcessSettings;
}

/**
 * @deprecated The broker's settings at the top level, the old shape: group them under
 * `inProcess` (`{ maxAttempts, inProcess: { retryDelaysMs: [0] } }`). Still accepted; removed in
 * the next release.
 */
export interface FlatInProcessBrokerOptions
  extends DeliveryRunnerOptions<RunnerCoreEvent>, InProcessSettings {
  /** Absent in the old shape: the settings are at the top level. */
  readonly inProcess?: undefined;
}

/** `new InProcessBroker(options)`: the shared options and an `inProcess` section. */
export type InProcessBrokerOptions =
  | GroupedInProcessBrokerOptions
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- the old shape, kept one release
  | FlatInProcessBrokerOptions;

export interface ResolvedInProcessBrokerOptions extends ResolvedDeliveryRunnerOptions<RunnerCoreEvent> {
  readonly retryDelaysMs: readonly number[];
  readonly autoStart: boolean;
  readonly unroutable: 'reject' | 'accept';
}

const DEFAULT_RETRY_DELAYS_MS = [100, 1000, 5000];

export function resolveInProcessBrokerOptions(
  options: InProcessBrokerOptions,
): ResolvedInProcessBrokerOptions {
  const checks: OptionChecks = new OptionChecks('InProcessBroker');
  const { settings, path } = transportSection<InProcessSettings>(
    checks,
    options,
    'inProcess',
    IN_PROCESS_SETTINGS,
  );
  const retryDelaysMs = settings.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
  if (!Array.isArray(retryDelaysMs))
    checks.fail(`${path}retryDelaysMs`, retryDelaysMs, 'an array of delays in ms');
  retryDelaysMs.forEach((delay, index) =>
    checks.nonNegativeNumber(`${path}retryDelaysMs[${index}]`, delay, 0),
  );
  const shared = resolveDeliveryRunnerOptions(checks, options, retryDelaysMs.length + 1);
  // Each retry waits its delay: more than one attempt needs one.
  if (shared.maxAttempts > 1 && retryDelaysMs.length === 0)
    checks.fail('maxAttempts', shared.maxAttempts, `1 when ${path}retryDelaysMs is empty`);
  if (settings.autoStart !== undefined && typeof settings.autoStart !== 'boolean')
    checks.fail(`${path}autoStart`, settings.autoStart, 'true or false');
  return {
    ...shared,
    retryDelaysMs,
    autoStart: settings.autoStart ?? true,
    unroutable: checks.oneOf(
      `${path}unroutable`,
      settings.unroutable,
      ['reject', 'accept'],
      'reject',
    ),
  };
}
