/**
 * Records a failed publish. Broker unavailability gives the row back (due at once, its attempts
 * kept) and starts the relay's outage backoff (or takes its next step, once per failed round),
 * which alone decides when it is tried again; any other
 * failure counts against `maxAttempts` and reschedules the row with backoff, or moves it to DEAD:
 * at once when it cannot succeed later (non-retryable, or a message the broker refused for what
 * it is, e.g. too large: `isRejectedMessageError`). The classifier is the consumers' own
 * (delivery/failure.ts), with the relay's `classify` hook.
 */
import { backoffDelay } from '../backoff.js';
import { classifyFailure, type FailureClassifier } from '../delivery/failure.js';
import { describeError } from '../errors.js';
import type { OutboundMessage } from '../publisher.js';
import type { ClaimedRow } from './claim-query.js';
import { observe } from './observe-hook.js';
import type { RelayContext } from './relay-context.js';
import type { PublishFailure } from './relay-options.js';

/**
 * What a failed publish means, by the classifier every consumer uses too: an outage (row back,
 * attempts kept), a retry with backoff, or DEAD (non-retryable, or `maxAttempts` reached).
 */
export function relayDecision(
  error: unknown,
  attempts: number,
  maxAttempts: number,
  classify?: FailureClassifier,
): 'outage' | 'retry' | 'dead' {
  const kind = classifyFailure(error, classify);
  if (kind === 'unavailable') return 'outage';
  return kind === 'non-retryable' || attempts >= maxAttempts ? 'dead' : 'retry';
}

export async function recordFailure(
  context: RelayContext,
  row: ClaimedRow,
  token: string,
  message: OutboundMessage,
  error: unknown,
  result: { failed: number; dead: number },
  /** The outage round the publish started in (`BrokerOutage.round`). */
  round: number,
): Promise<void> {
  const { db, sql, config, hooks, outage, totals, now, nowMs } = context;
  const { type, message: text } = describeError(error);
  const attempts = Number(row.attempts);
  const decision = relayDecision(error, attempts, config.maxAttempts, config.classify);
  if (decision === 'outage') {
    const delay = outage.failed(round, nowMs(), (streak) =>
      backoffDelay(streak, undefined, config.unavailableBackoff, config.random),
    );
    // Due again at once: the outage (in memory) holds it back, and ends for it too when a
    // confirmed publish or the probe's reconnect ends it early.
    await sql.deferred(db, row.id, token, now(), `broker unavailable: ${type}: ${text}`);
    result.failed++;
    totals.unavailable++;
    observe(() =>
      hooks.onFailed?.(message, { error, dead: false, retryInMs: delay, unavailable: true }),
    );
    return;
  }
  const dead = decision === 'dead';
  const delay = dead ? 0 : backoffDelay(attempts, undefined, config.backoff, config.random);
  await sql.failed(db, row.id, token, dead ? 'DEAD' : 'READY', now(), delay, `${type}: ${text}`);
  if (dead) result.dead++;
  else result.failed++;
  const failure: PublishFailure = dead ? { error, dead } : { error, dead, retryInMs: delay };
  observe(() => hooks.onFailed?.(message, failure));
}
