/**
 * Records a failed publish. Broker unavailability gives the row back with its attempts kept and
 * starts the relay's outage backoff (or takes its next step, once per failed round); any other
 * failure counts against `maxAttempts` and reschedules the row with backoff, or moves it to DEAD:
 * at once when it cannot succeed later (non-retryable, or a message the broker refused for what
 * it is, e.g. too large: `isRejectedMessageError`).
 */
import { backoffDelay } from '../backoff.js';
import {
  classifyError,
  describeError,
  isRejectedMessageError,
  isUnavailableError,
} from '../errors.js';
import type { OutboundMessage } from '../publisher.js';
import type { ClaimedRow } from './claim-query.js';
import { observe } from './observe-hook.js';
import type { RelayContext } from './relay-context.js';
import type { PublishFailure } from './relay-options.js';

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
  const rejected = isRejectedMessageError(error);
  if (!rejected && isUnavailableError(error)) {
    const delay = outage.failed(round, nowMs(), (streak) =>
      backoffDelay(streak, undefined, config.unavailableBackoff, config.random),
    );
    await sql.deferred(db, row.id, token, now(), delay, `broker unavailable: ${type}: ${text}`);
    result.failed++;
    totals.unavailable++;
    observe(() =>
      hooks.onFailed?.(message, { error, dead: false, retryInMs: delay, unavailable: true }),
    );
    return;
  }
  const attempts = Number(row.attempts);
  const dead =
    rejected || attempts >= config.maxAttempts || classifyError(error) === 'non-retryable';
  const delay = dead ? 0 : backoffDelay(attempts, undefined, config.backoff, config.random);
  await sql.failed(db, row.id, token, dead ? 'DEAD' : 'READY', now(), delay, `${type}: ${text}`);
  if (dead) result.dead++;
  else result.failed++;
  const failure: PublishFailure = dead ? { error, dead } : { error, dead, retryInMs: delay };
  observe(() => hooks.onFailed?.(message, failure));
}
