/**
 * Notices the broker's return during an outage backoff, so the relay publishes again at once
 * instead of sleeping out a step that may have grown to 30 s (issue: a relay parked for half a
 * minute after the broker was long back).
 *
 * While the relay waits out a step, the publisher's `probe()` is called (each call bounded by
 * `timeoutMs`, again every `intervalMs`). A probe that fails or does not answer in time means
 * the broker is unreachable; a probe that resolves after one did, in the same outage, means the
 * publisher reconnected, and the outage ends (`BrokerOutage.succeeded()`: the waiting lanes
 * wake). While no probe of the outage has failed, a resolving probe ends nothing: the connection
 * is up and publishes still failed (the broker refuses work while connected), so the backoff
 * runs its course there.
 */
import type { BrokerOutage } from './broker-outage.js';

interface OutageProbeOptions {
  readonly outage: BrokerOutage;
  /** The publisher's probe (see `Publisher.probe`). */
  readonly probe: () => Promise<void>;
  readonly nowMs: () => number;
  readonly isStopping: () => boolean;
  /** Pause between probes while the broker is unreachable. Default 500 ms. */
  readonly intervalMs?: number;
  /** A probe not answered within this long counts as unreachable. Default 2 000 ms. */
  readonly timeoutMs?: number;
  readonly onError?: (error: unknown) => void;
}

/** Returns `watch()`: call it when an outage step starts; one watch runs at a time. */
export function outageProbe(options: OutageProbeOptions): { watch(): void } {
  const { outage, nowMs, isStopping } = options;
  const intervalMs = options.intervalMs ?? 500;
  const timeoutMs = options.timeoutMs ?? 2_000;
  let running = false;
  /** A probe failed since the outage began (its first step). */
  let unreachable = false;
  const waiting = () => !isStopping() && outage.until > nowMs();

  /** Whether the probe resolved within the bound. */
  const answered = async (): Promise<boolean> => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const probe = options.probe();
      // A probe abandoned here may still settle later; that is no unhandled rejection.
      probe.catch(() => undefined);
      return await Promise.race([
        probe.then(() => true),
        new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs))),
      ]);
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  };

  const run = async () => {
    while (waiting()) {
      const up = await answered();
      if (!waiting()) return;
      if (up) {
        if (unreachable) outage.succeeded();
        return;
      }
      unreachable = true;
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  };

  return {
    watch() {
      // The first step of an outage: nothing is known about reachability yet.
      if (outage.streak <= 1) unreachable = false;
      if (running) return;
      running = true;
      run()
        .catch((error: unknown) => options.onError?.(error))
        .finally(() => (running = false));
    },
  };
}
