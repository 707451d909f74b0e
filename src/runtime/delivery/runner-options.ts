/**
 * The options every runner shares, resolved one way (as the relay always did: options →
 * `resolve…Options` → a type with no optionals). Each transport's options extend
 * `DeliveryRunnerOptions` with its own section, and its resolver builds on
 * `resolveDeliveryRunnerOptions`: a bad value is refused at construction with a
 * `RunnerOptionsError` naming the runner, the option, the value and what is allowed, never later
 * in the middle of a delivery.
 */
import type { BackoffOptions } from '../backoff.js';
import { DEFAULT_MESSAGE_BODY_LIMITS, type MessageBodyLimits } from '../decode-message-body.js';
import type { CircuitBreakerOptions } from './circuit-breaker.js';
import type { FailureClassifier } from './failure.js';
import type { MessageHandler } from './message-handler.js';
import { REAL_RUNNER_TIMERS, type RunnerTimers } from './runner-timers.js';

/** What every consumer runner (RabbitMQ, Kafka, in-process) is configured with. */
export interface DeliveryRunnerOptions<E> {
  /**
   * Handling attempts in all, the first delivery included; a retryable failure on the last one
   * is dead-lettered. Default: the transport's retry tiers + 1 (RabbitMQ and Kafka: the routes'
   * `maxAttempts` when the topology sets one).
   */
  readonly maxAttempts?: number | undefined;
  /**
   * Largest body (`maxBytes`, default 1 MiB) and deepest nesting (`maxDepth`, default 64)
   * accepted; a message beyond them is dead-lettered before it is parsed.
   */
  readonly messageLimits?: MessageBodyLimits | undefined;
  /**
   * When the handler fails because a dependency is unavailable (`isUnavailableError`: database
   * connection lost or refused, UnavailableError), no attempt is used: the delivery stays where
   * it is and consumption pauses for a backoff (default 1 s doubling to 30 s), then resumes
   * after `healthCheck`, if given.
   */
  readonly circuitBreaker?: CircuitBreakerOptions | undefined;
  /** Your say in what a handler's failure means, asked before evgen's own (see FailureClassifier). */
  readonly classify?: FailureClassifier | undefined;
  /** Observability hook; must not throw (an exception it throws is ignored). */
  readonly onEvent?: ((event: E) => void) | undefined;
  /** Clock for failure and due times, epoch ms (tests). Default `Date.now`. */
  readonly now?: (() => number) | undefined;
  /**
   * Source of backoff jitter, a number in [0, 1) (tests pass a fixed one): the breaker's and
   * reconnect backoffs, Kafka's in-place and settle retries. Default `Math.random`.
   */
  readonly random?: (() => number) | undefined;
  /**
   * Timers for the breaker's pauses, reconnect delays, in-process retries and Kafka's partition
   * holds and commit retries (tests). Default: the process's.
   */
  readonly timers?: RunnerTimers | undefined;
}

/** The shared options with every default filled in and every value checked. */
export interface ResolvedDeliveryRunnerOptions<E> {
  readonly maxAttempts: number;
  readonly messageLimits: Required<MessageBodyLimits>;
  readonly circuitBreaker: CircuitBreakerOptions;
  readonly classify: FailureClassifier | undefined;
  readonly onEvent: ((event: E) => void) | undefined;
  readonly now: () => number;
  readonly random: () => number;
  readonly timers: RunnerTimers;
}

/**
 * A runner option that cannot work, refused when the runner is created. A `RangeError`, as the
 * runtime's argument checks always were; `option` is the option's path (`circuitBreaker.backoff.capMs`).
 */
export class RunnerOptionsError extends RangeError {
  readonly code = 'RunnerOptionsError';
  constructor(
    /** The function that refused it, e.g. `createKafkaConsumerRunner`. */
    readonly runner: string,
    readonly option: string,
    readonly value: unknown,
    /** What the option accepts, e.g. `a positive integer`. */
    readonly allowed: string,
  ) {
    super(`${runner}: ${option} must be ${allowed}, got ${describeValue(value)}`);
    this.name = 'RunnerOptionsError';
  }
}

function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return `[${value.map(describeValue).join(', ')}]`;
  if (value === null || typeof value !== 'object') return String(value);
  return 'an object';
}

/**
 * The checks every resolver uses, bound to the runner's name. Each returns the value (or the
 * fallback when the value is `undefined`: an explicit `undefined` keeps the default) or throws a
 * `RunnerOptionsError`.
 */
export class OptionChecks {
  constructor(readonly runner: string) {}

  fail(option: string, value: unknown, allowed: string): never {
    throw new RunnerOptionsError(this.runner, option, value, allowed);
  }

  positiveInteger(option: string, value: unknown, fallback: number): number {
    if (value === undefined) return fallback;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1)
      this.fail(option, value, 'a positive integer');
    return value;
  }

  /** > 0 and finite. */
  positiveNumber(option: string, value: unknown, fallback: number): number {
    if (value === undefined) return fallback;
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
      this.fail(option, value, 'a positive number of ms');
    return value;
  }

  /** ≥ 0; Infinity allowed when `infinite` (no bound). */
  nonNegativeNumber(option: string, value: unknown, fallback: number, infinite = false): number {
    if (value === undefined) return fallback;
    if (
      typeof value !== 'number' ||
      Number.isNaN(value) ||
      value < 0 ||
      (!infinite && !Number.isFinite(value))
    )
      this.fail(option, value, infinite ? 'a number ≥ 0 (or Infinity)' : 'a finite number ≥ 0');
    return value;
  }

  /** A function, or undefined when none is given. */
  optionalFunction<F>(option: string, value: F | undefined): F | undefined {
    if (value !== undefined && typeof value !== 'function')
      this.fail(option, value, 'a function (or left out)');
    return value;
  }

  oneOf<T extends string>(option: string, value: unknown, allowed: readonly T[], fallback: T): T {
    if (value === undefined) return fallback;
    if (!allowed.includes(value as T))
      this.fail(option, value, `one of ${allowed.map((one) => `'${one}'`).join(', ')}`);
    return value as T;
  }

  /** A non-empty string, or undefined when none is given. */
  optionalName(option: string, value: unknown): string | undefined {
    if (value !== undefined && (typeof value !== 'string' || value === ''))
      this.fail(option, value, 'a non-empty string (or left out)');
    return value;
  }

  /** Timers with `setTimeout` and `clearTimeout` functions, or undefined when none are given. */
  timers(option: string, value: RunnerTimers | undefined): RunnerTimers | undefined {
    if (value === undefined) return undefined;
    if (
      value === null ||
      typeof value !== 'object' ||
      typeof value.setTimeout !== 'function' ||
      typeof value.clearTimeout !== 'function'
    )
      this.fail(option, value, 'an object with setTimeout and clearTimeout (or left out)');
    return value;
  }

  /** A consumer's handler: a `name` and a `handle` function (a generated consumer fits). */
  handler(option: string, value: unknown): MessageHandler {
    const handler = value as Partial<MessageHandler> | undefined;
    if (handler === null || typeof handler !== 'object')
      this.fail(option, value, 'an object with name and handle (a generated consumer)');
    if (typeof handler.name !== 'string' || handler.name === '')
      this.fail(`${option}.name`, handler.name, 'a non-empty string');
    if (typeof handler.handle !== 'function')
      this.fail(`${option}.handle`, handler.handle, 'a function');
    return handler as MessageHandler;
  }

  /** Backoff settings: each given one checked (base and cap ≥ 0 ms, base ≤ cap, jitter 0–1). */
  backoff(option: string, value: BackoffOptions | undefined): BackoffOptions | undefined {
    if (value === undefined) return undefined;
    if (value === null || typeof value !== 'object')
      this.fail(option, value, 'an object with baseMs, capMs and jitter (each optional)');
    const baseMs = this.nonNegativeNumber(`${option}.baseMs`, value.baseMs, 0);
    const capMs = this.nonNegativeNumber(`${option}.capMs`, value.capMs, Infinity, true);
    if (value.baseMs !== undefined && value.capMs !== undefined && capMs < baseMs)
      this.fail(`${option}.capMs`, capMs, `at least baseMs (${baseMs})`);
    if (
      value.jitter !== undefined &&
      (typeof value.jitter !== 'number' || !(value.jitter >= 0 && value.jitter <= 1))
    )
      this.fail(`${option}.jitter`, value.jitter, 'a share between 0 and 1');
    return value;
  }
}

/** Runners already warned about the old shape: once per runner and process, as Node does. */
const warnedFlat = new Set<string>();

/** The old shape still works; says so once, as a DeprecationWarning (`EVGEN_FLAT_RUNNER_OPTIONS`). */
function warnFlatShape(runner: string, section: string): void {
  if (warnedFlat.has(runner)) return;
  warnedFlat.add(runner);
  process.emitWarning(
    `${runner}: transport settings at the top level are deprecated and removed in the next release; group them under \`${section}\``,
    { type: 'DeprecationWarning', code: 'EVGEN_FLAT_RUNNER_OPTIONS' },
  );
}

/**
 * A runner's transport settings, grouped under `section` (`rabbitmq`, `kafka`, `inProcess`) or,
 * in the old shape (deprecated), at the top level beside the shared options. Returns the
 * settings and the prefix of their option paths in errors (`rabbitmq.` or none). Both shapes at
 * once are refused: a top-level setting beside the section would be silently ignored.
 */
export function transportSection<S extends object>(
  checks: OptionChecks,
  options: object,
  section: string,
  keys: readonly (keyof S & string)[],
): { readonly settings: Partial<S>; readonly path: string } {
  const given = options as Record<string, unknown>;
  const grouped = given[section];
  if (grouped === undefined) {
    if (keys.some((key) => given[key] !== undefined)) warnFlatShape(checks.runner, section);
    return { settings: options, path: '' };
  }
  if (grouped === null || typeof grouped !== 'object' || Array.isArray(grouped))
    checks.fail(section, grouped, `an object with the runner's ${section} settings`);
  for (const key of keys)
    if (given[key] !== undefined)
      checks.fail(
        key,
        given[key],
        `given in ${section}.${key} (beside ${section}, not at the top level)`,
      );
  return { settings: grouped, path: `${section}.` };
}

/**
 * Checks and defaults the options every runner shares. `defaultMaxAttempts` is the transport's
 * (its retry tiers + 1, or its routes' setting).
 */
/**
 * A transport whose retries are copies on delay tiers (RabbitMQ queues, Pulsar topics) can make
 * more than one attempt only when the consumer's routes have a tier.
 */
export function checkRetryTierFor(
  checks: OptionChecks,
  maxAttempts: number,
  retryTiers: number,
  consumer: string,
): void {
  if (maxAttempts > 1 && retryTiers === 0)
    checks.fail('maxAttempts', maxAttempts, `1: routes of ${consumer} have no retry tier`);
}

export function resolveDeliveryRunnerOptions<E>(
  checks: OptionChecks,
  options: DeliveryRunnerOptions<E>,
  defaultMaxAttempts: number,
): ResolvedDeliveryRunnerOptions<E> {
  const limits = options.messageLimits ?? {};
  const limit = (name: keyof MessageBodyLimits): number => {
    const value = limits[name];
    if (value === undefined) return DEFAULT_MESSAGE_BODY_LIMITS[name];
    if (!(Number.isInteger(value) && value >= 1) && value !== Number.POSITIVE_INFINITY)
      checks.fail(`messageLimits.${name}`, value, 'a positive integer (or Infinity)');
    return value;
  };
  const breaker = options.circuitBreaker ?? {};
  return {
    maxAttempts: checks.positiveInteger('maxAttempts', options.maxAttempts, defaultMaxAttempts),
    messageLimits: { maxBytes: limit('maxBytes'), maxDepth: limit('maxDepth') },
    circuitBreaker: {
      backoff: checks.backoff('circuitBreaker.backoff', breaker.backoff),
      healthCheck: checks.optionalFunction('circuitBreaker.healthCheck', breaker.healthCheck),
    },
    classify: checks.optionalFunction('classify', options.classify),
    onEvent: checks.optionalFunction('onEvent', options.onEvent),
    now: checks.optionalFunction('now', options.now) ?? Date.now,
    random: checks.optionalFunction('random', options.random) ?? Math.random,
    timers: checks.timers('timers', options.timers) ?? REAL_RUNNER_TIMERS,
  };
}
