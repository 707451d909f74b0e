/**
 * Graceful shutdown, wired once for a service's runners: on SIGTERM (or SIGINT) every consumer
 * runner and relay is stopped together, then the resources are closed in order, then the process
 * exits — all within one bound (`timeoutMs`, default 25 s: under Kubernetes' default 30 s
 * `terminationGracePeriodSeconds`, which ends in SIGKILL).
 *
 * What stopping means (each runner already does it; this only sequences and bounds it):
 *   - consumers: take no new deliveries (readiness goes down at once: state `stopping`), finish
 *     the ones being handled, settle them (ack / offset commit), close; deliveries fetched but not
 *     started go back to the broker untouched;
 *   - relays: start no new publish, give back untried rows, await in-flight publishes and record
 *     them; publishes still unconfirmed when the relay's share of the bound is over are released
 *     (their rows go back to READY for the next relay, attempt kept).
 * If the bound passes anyway, the process exits with code 1 without waiting: what was not
 * settled is delivered again (RabbitMQ requeues unacked deliveries, Kafka re-reads uncommitted
 * offsets) and the inbox makes a second delivery of a committed message a duplicate, so nothing
 * is lost or applied twice; only the time to get there is longer.
 */

/** A consumer runner (RabbitMQ, Kafka, Pulsar, in-process). */
export interface StoppableRunner {
  stop(): Promise<void>;
}

/** An outbox relay: `stop({ timeoutMs })` releases what is still in flight after it. */
export interface StoppableRelay {
  stop(options?: { readonly timeoutMs?: number }): Promise<void>;
}

export type ShutdownEvent =
  | { readonly type: 'shutdown-started'; readonly reason: string }
  | { readonly type: 'shutdown-error'; readonly error: unknown }
  | {
      readonly type: 'shutdown-finished';
      /** The bound passed before everything stopped. */
      readonly timedOut: boolean;
      readonly durationMs: number;
      /** The exit code the process gets: 0 clean, 1 timed out or an error. */
      readonly exitCode: number;
    };

export interface GracefulShutdownOptions {
  /** Consumer runners, stopped together. */
  readonly consumers?: readonly StoppableRunner[];
  /** Relays, stopped beside the consumers; their in-flight publishes get `relayTimeoutMs`. */
  readonly relays?: readonly StoppableRelay[];
  /** Called after every runner stopped, in order: HTTP servers, pools, connections. */
  readonly close?: readonly (() => unknown)[];
  /** The whole shutdown's bound in ms (default 25 000). */
  readonly timeoutMs?: number;
  /** How long relays wait for in-flight publishes before releasing them (default timeoutMs / 2). */
  readonly relayTimeoutMs?: number;
  /** Signals that start it (default SIGTERM and SIGINT). A second signal changes nothing. */
  readonly signals?: readonly NodeJS.Signals[];
  /** What ends the process (default `process.exit`). */
  readonly exit?: (code: number) => void;
  /** Progress, for logs; must not throw. */
  readonly onEvent?: (event: ShutdownEvent) => void;
}

export interface GracefulShutdown {
  /** Runs the shutdown (what the signal does); every call gets the same promise. Resolves with the exit code. */
  shutdown(reason?: string): Promise<number>;
  /** Removes the signal handlers (the shutdown can still be run by `shutdown()`). */
  dispose(): void;
}

export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 25_000;

export function shutdownOnSignal(options: GracefulShutdownOptions): GracefulShutdown {
  const timeoutMs = options.timeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0)
    throw new RangeError(`timeoutMs must be a positive number, got ${timeoutMs}`);
  const relayTimeoutMs = options.relayTimeoutMs ?? timeoutMs / 2;
  if (!Number.isFinite(relayTimeoutMs) || relayTimeoutMs < 0 || relayTimeoutMs >= timeoutMs)
    throw new RangeError(
      `relayTimeoutMs must be at least 0 and below timeoutMs (${timeoutMs}), got ${relayTimeoutMs}`,
    );
  const signals = options.signals ?? ['SIGTERM', 'SIGINT'];
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const report = (event: ShutdownEvent) => {
    try {
      options.onEvent?.(event);
    } catch {
      // A logging hook must not stop the shutdown.
    }
  };
  let running: Promise<number> | undefined;

  async function stopEverything(): Promise<boolean> {
    let failed = false;
    const attempt = async (work: () => unknown) => {
      try {
        await work();
      } catch (error) {
        failed = true;
        report({ type: 'shutdown-error', error });
      }
    };
    await Promise.all([
      ...(options.consumers ?? []).map((runner) => attempt(() => runner.stop())),
      ...(options.relays ?? []).map((relay) =>
        attempt(() => relay.stop({ timeoutMs: relayTimeoutMs })),
      ),
    ]);
    for (const close of options.close ?? []) await attempt(close);
    return !failed;
  }

  async function run(reason: string): Promise<number> {
    const started = Date.now();
    report({ type: 'shutdown-started', reason });
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    const outcome = await Promise.race([stopEverything(), bound]);
    clearTimeout(timer);
    const timedOut = outcome === 'timeout';
    const exitCode = outcome === true ? 0 : 1;
    report({ type: 'shutdown-finished', timedOut, durationMs: Date.now() - started, exitCode });
    return exitCode;
  }

  const onSignal = (signal: NodeJS.Signals) => {
    void shutdown(signal).then(exit);
  };
  for (const signal of signals) process.on(signal, onSignal);

  function shutdown(reason = 'shutdown()'): Promise<number> {
    running ??= run(reason);
    return running;
  }

  return {
    shutdown,
    dispose() {
      for (const signal of signals) process.off(signal, onSignal);
    },
  };
}
