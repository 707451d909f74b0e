/**
 * The lease of one claim: how long its rows are surely this relay's, renewed in the background
 * (heartbeat) while the batch publishes. A publish starts only while the lease outlives its
 * timeout, so none is still awaited once another relay may have claimed the row.
 */
import type { RelayContext } from './relay-context.js';

interface ClaimLease {
  /** Whether a publish started now would settle (or time out) before the lease could end. */
  allowsPublish(): boolean;
  /** Renews once a quarter of the lease has passed since the last renewal. */
  heartbeat(): void;
  /** Resolves once a renewal in flight (if any) has settled. */
  settled(): Promise<void>;
}

export function leaseOf(context: RelayContext, token: string, claimedAt: number): ClaimLease {
  const { db, sql, totals, nowMs, now, reportError } = context;
  const { leaseMs, publishTimeoutMs } = context.config;
  let validUntil = claimedAt + leaseMs;
  let renewing: Promise<void> | undefined;
  return {
    allowsPublish: () => nowMs() + publishTimeoutMs <= validUntil,
    heartbeat() {
      if (renewing !== undefined || validUntil - nowMs() > (leaseMs * 3) / 4) return;
      const startedAt = nowMs();
      renewing = sql
        .renew(db, token, leaseMs, now())
        .then(
          () => {
            validUntil = Math.max(validUntil, startedAt + leaseMs);
            totals.leaseRenewals++;
          },
          // Not renewed: the old lease still bounds what this relay starts.
          reportError,
        )
        .finally(() => {
          renewing = undefined;
        });
    },
    settled: () => renewing ?? Promise.resolve(),
  };
}
