/**
 * How the RabbitMQ runner carries a failed delivery out, once the delivery core decided it:
 *   - a gap the delivery core lets wait (`ctx.inOrder` found an earlier version missing; how long
 *     it may wait is delivery/gap-wait.ts's rule) parks a copy on the first delay tier, attempt
 *     unchanged, carrying the wait clock in `x-evgen-gap-*`; a park that cannot be published
 *     becomes a dead letter, like a retry copy;
 *   - a retry publishes a copy to the delay tier of its attempt (attempt + 1), waits for the
 *     confirm, then acks; a copy that cannot be published, or could not keep the messageId
 *     (copy-limits.ts), becomes a dead letter instead;
 *   - a dead letter goes to the dead queue, the full letter first and a minimal one second
 *     (always encodable); only when neither is confirmed does the delivery stay unacked (the
 *     caller rebuilds the channel, so the broker redelivers it after a backoff).
 * The retry-or-dead-letter decision itself is never made here.
 */
import type { ConsumeMessage } from 'amqplib';
import { describeError } from '../errors.js';
import type { DeliveryCounters } from '../delivery/delivery-outcome.js';
import type { FailedOutcome } from '../delivery/outcome-settlement.js';
import { EVGEN_HEADERS } from './amqp-message.js';
import type { ConfirmedPublisher } from './confirmed-publisher.js';
import {
  deadLetterCandidates,
  deadLetterHeaders,
  failureContext,
  type FailureContext,
} from './failure-headers.js';
import { tierForAttempt, type ConsumerRoutes } from './topology.js';
import type { ConsumerRunnerEvent } from './consumer-runner-types.js';

/** A delivery being settled, on the channel it arrived on. */
export interface AmqpTarget {
  readonly publisher: ConfirmedPublisher;
  readonly message: ConsumeMessage;
  readonly attempt: number;
  /** Acknowledges the delivery (a no-op after its channel was lost). */
  ack(): void;
}

interface AmqpSettlerCounts {
  settleFailures: number;
  gapWaits: number;
}

interface AmqpSettlerDeps {
  readonly routes: ConsumerRoutes;
  readonly counters: DeliveryCounters;
  readonly counts: AmqpSettlerCounts;
  readonly emit: (event: ConsumerRunnerEvent) => void;
}

/** Resolves true when the failure was carried out (and acked), false when nothing was confirmed. */
export function createAmqpSettler(
  deps: AmqpSettlerDeps,
): (target: AmqpTarget, outcome: FailedOutcome) => Promise<boolean> {
  const { routes, counts, emit } = deps;

  async function publish(
    target: AmqpTarget,
    routingKey: string,
    properties: ReturnType<FailureContext['properties']>,
  ): Promise<unknown> {
    try {
      await target.publisher.publish(
        routes.retryExchange,
        routingKey,
        target.message.content,
        properties,
      );
      return undefined;
    } catch (publishError) {
      counts.settleFailures++;
      emit({ type: 'error', error: publishError });
      return publishError ?? new Error('publish failed');
    }
  }

  async function gapWait(
    target: AmqpTarget,
    context: FailureContext,
    park: NonNullable<Extract<FailedOutcome, { kind: 'retry' }>['park']>,
  ): Promise<unknown> {
    const tier = tierForAttempt(routes, 1);
    const { clock } = park;
    const headers: Record<string, unknown> = {
      ...context.received,
      ...context.common,
      [EVGEN_HEADERS.attempt]: target.attempt,
      [EVGEN_HEADERS.gapSince]: new Date(clock.since).toISOString(),
      [EVGEN_HEADERS.gapFirst]: new Date(clock.firstAt).toISOString(),
    };
    if (clock.expected !== undefined) headers[EVGEN_HEADERS.gapExpected] = clock.expected;
    else delete headers[EVGEN_HEADERS.gapExpected];
    const failed = await publish(target, tier.routingKey, context.properties(headers));
    if (failed !== undefined) return failed;
    target.ack();
    counts.gapWaits++;
    emit({
      type: 'gap-wait',
      messageId: context.messageId!,
      waitedMs: park.waitedMs,
      delayMs: tier.delayMs,
    });
    return undefined;
  }

  async function retryCopy(
    target: AmqpTarget,
    context: FailureContext,
    outcome: Extract<FailedOutcome, { kind: 'retry' }>,
  ): Promise<unknown> {
    const tier = tierForAttempt(routes, target.attempt);
    const headers = {
      ...context.received,
      ...context.common,
      [EVGEN_HEADERS.attempt]: target.attempt + 1,
    };
    const failed = await publish(target, tier.routingKey, context.properties(headers));
    if (failed !== undefined) return failed;
    target.ack();
    deps.counters.settled(outcome);
    emit({
      type: 'retried',
      messageId: outcome.messageId,
      attempt: target.attempt,
      delayMs: tier.delayMs,
      error: outcome.error,
    });
    return undefined;
  }

  async function deadLetter(
    target: AmqpTarget,
    context: FailureContext,
    outcome: FailedOutcome,
    retryFailure: unknown,
  ): Promise<boolean> {
    const errorMessage =
      retryFailure === undefined
        ? context.errorMessage
        : `${context.errorMessage} (its retry copy could not be published: ${describeError(retryFailure).message})`;
    const diagnostics = deadLetterHeaders(context, outcome.letter, errorMessage);
    for (const properties of deadLetterCandidates(context, target.message, diagnostics)) {
      if ((await publish(target, routes.deadRoutingKey, properties)) !== undefined) continue;
      target.ack();
      deps.counters.deadLettered++;
      emit({
        type: 'dead-lettered',
        messageId: context.messageId,
        attempts: outcome.letter.attempts,
        error: outcome.error,
      });
      return true;
    }
    return false;
  }

  return async (target, outcome) => {
    const context = failureContext(target.message, outcome.letter.failure, outcome.messageId);
    let retryFailure: unknown;
    if (!context.carriesId && outcome.kind === 'retry') {
      // A copy would come back under another messageId: it can only be a dead letter.
      retryFailure = new Error('its messageId cannot be carried as an AMQP messageId property');
    } else if (outcome.kind === 'retry') {
      retryFailure =
        outcome.park !== undefined
          ? await gapWait(target, context, outcome.park)
          : await retryCopy(target, context, outcome);
      if (retryFailure === undefined) return true;
    }
    return deadLetter(target, context, outcome, retryFailure);
  };
}
