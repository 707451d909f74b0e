/**
 * A runner's health as data: the relay and every consumer runner answer `health()` with the
 * same shape, which the HTTP endpoints (health/health-endpoints.ts) turn into `/livez` and
 * `/readyz`. Readiness says "this runner is doing its work now": running, breaker closed, broker
 * connected. Liveness says "restarting this process would help": it is deliberately not tied to
 * the broker or the database, whose outages a restart does not cure (the runner reconnects and
 * resumes by itself), so an orchestrator never kills a pod for a broker outage.
 */
import type { RunnerState } from './runner-lifecycle.js';

/** `up`: ready; `down`: not ready now (the facts and reasons say why). */
export type HealthStatus = 'up' | 'down';

/** What a runner knows about itself; absent fields do not apply to that runner. */
export interface HealthFacts {
  /** The lifecycle state (new, starting, running, stopping, stopped). */
  readonly state: RunnerState;
  /** Deliveries or publishes being worked on now. */
  readonly inFlight: number;
  /** The circuit breaker is open: a dependency (the database) is away, consumption is paused. */
  readonly breakerOpen?: boolean;
  /** When the breaker opened (ISO 8601), while it is open. */
  readonly breakerOpenSince?: string;
  /** Why the breaker opened (the error's message), while it is open. */
  readonly breakerReason?: string;
  /** Since when the broker has been unreachable (ISO 8601), while it is. */
  readonly brokerDisconnectedSince?: string;
  /** Kafka: partitions this member owns. */
  readonly partitionsAssigned?: number;
  /** Kafka: records behind the group's position, summed over owned partitions (when it could be read). */
  readonly lag?: number;
  /** Relay: READY and PROCESSING rows. */
  readonly outboxBacklog?: number;
  /** Relay: age of the oldest unsent row in ms (null when none). */
  readonly oldestUnsentAgeMs?: number | null;
  /** Relay: rows given up on (DEAD), waiting for an operator. */
  readonly deadRows?: number;
  /** Relay: the outbox's database answered the backlog query (false: it did not, in time). */
  readonly databaseReachable?: boolean;
}

export interface RunnerHealth {
  /** The runner's name (a consumer's inbox key, `relay` for a relay) when the caller gave one. */
  readonly name?: string;
  readonly status: HealthStatus;
  /** Ready to take work now (readiness). */
  readonly ready: boolean;
  /** Alive (liveness): true while the process answers; broker and database outages never make it false. */
  readonly live: boolean;
  /** Why it is not ready, in words (empty when ready). */
  readonly reasons: readonly string[];
  readonly facts: HealthFacts;
}

/** Readiness from the facts: running, breaker closed, broker reachable, database answering. */
export function assessHealth(facts: HealthFacts): RunnerHealth {
  const reasons: string[] = [];
  if (facts.state !== 'running') reasons.push(`runner is ${facts.state}`);
  if (facts.breakerOpen === true)
    reasons.push(
      `circuit breaker open since ${facts.breakerOpenSince ?? '?'}: ${facts.breakerReason ?? 'a dependency is unavailable'}`,
    );
  if (facts.brokerDisconnectedSince !== undefined)
    reasons.push(`broker unreachable since ${facts.brokerDisconnectedSince}`);
  if (facts.databaseReachable === false) reasons.push('outbox database did not answer');
  const ready = reasons.length === 0;
  return { status: ready ? 'up' : 'down', ready, live: true, reasons, facts };
}

/** `promise`'s value, or `fallback` once `ms` passed (a health check must answer in time). */
export async function withinMs<T>(promise: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<T>((resolve) => (timer = setTimeout(() => resolve(fallback), ms)));
  try {
    return await Promise.race([promise.catch(() => fallback), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Epoch ms as ISO 8601, or undefined. */
export function isoSince(epochMs: number | undefined): string | undefined {
  return epochMs === undefined ? undefined : new Date(epochMs).toISOString();
}
