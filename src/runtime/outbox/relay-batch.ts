/**
 * One relay batch: claim due rows, publish each aggregate's rows in id order (each after the
 * previous one's confirm, or together through `publishChain`; aggregates concurrently within the
 * shared window), then record the outcome: failures as they happen, SENT marks together once the
 * publishes have settled (or after a short delay while a slow one is still awaited), untried rows
 * released and abandoned ones given back at the end.
 */
import { randomUUID } from 'node:crypto';
import { groupByAggregate } from './aggregate-chains.js';
import { toOutboundMessage, type ClaimedRow } from './claim-query.js';
import { observe } from './observe-hook.js';
import { recordFailure } from './record-failure.js';
import type { RelayContext } from './relay-context.js';
import { leaseOf } from './relay-lease.js';
import type { RelayBatchResult } from './relay-options.js';
import { tracePublishes } from '../telemetry.js';
import { SentFlusher } from './sent-flusher.js';
import type { SentMarks } from './unwritten-marks.js';

/** How long a SENT mark may wait for the rest of its batch before it is written on its own. */
const SENT_FLUSH_DELAY_MS = 200;

export type { SentMarks };

/** Writes marks a batch handed on; on an error they are kept (and the error reported) for a later try. */
export function writeSentMarks(context: RelayContext, marks: SentMarks): Promise<void> {
  return context.sql.sent(context.db, marks.ids, marks.token, context.now()).then(
    () => undefined,
    (error: unknown) => {
      context.unwritten.add(marks);
      context.reportError(error);
    },
  );
}

/** Writes the marks kept from earlier failures; throws (keeping them) while the database fails. */
export function writeUnwrittenMarks(context: RelayContext): Promise<void> {
  const { db, sql, now } = context;
  return context.unwritten.write((ids, token) => sql.sent(db, ids, token, now()));
}

/** A batch's outcome; `moreDue`: its claim saw due rows it left (ClaimedBatch), so the loop goes again. */
export interface BatchRun {
  readonly result: RelayBatchResult;
  readonly moreDue: boolean;
  readonly marks?: SentMarks;
}

/**
 * Runs one batch. `carried`: an earlier batch's SENT marks, written by this batch's claim
 * statement (one round trip for both). With `handOn`, this batch's own last marks are returned
 * for the next claim instead of written here; the caller must write them if no claim follows.
 */
export async function runBatch(
  context: RelayContext,
  carried?: SentMarks,
  handOn = false,
): Promise<BatchRun> {
  const { db, sql, config, hooks, publisher, window, outage, totals, now, nowMs } = context;
  const token = randomUUID();
  let claimed;
  try {
    // Marks an earlier failure kept come first: their rows hold their aggregates back.
    await writeUnwrittenMarks(context);
  } catch (error) {
    if (carried !== undefined) context.unwritten.add(carried);
    throw error;
  }
  const claimedAt = nowMs();
  try {
    claimed = await sql.claim(db, {
      batchSize: config.batchSize,
      token,
      leaseMs: config.leaseMs,
      now: now(),
      sentIds: carried?.ids ?? [],
      sentToken: carried?.token ?? null,
      // A lane of the loop (handOn) while the other publishes nothing; runOnce takes all it can.
      // A publisher without chains sends an aggregate's rows one confirm after another, so deeper
      // runs would make its batches longer, not faster: it gets every free aggregate at once.
      split: handOn && publisher.publishesChains && context.publishing.count === 0,
    });
  } catch (error) {
    // The claim statement carried them: kept for the next round trip that works.
    if (carried !== undefined) context.unwritten.add(carried);
    throw error;
  }
  const chains = groupByAggregate(claimed.rows);
  const result = { claimed: claimed.rows.length, published: 0, failed: 0, dead: 0, released: 0 };
  const lease = leaseOf(context, token, claimedAt);
  const releasedIds: string[] = [];
  const abandonedIds: string[] = [];
  const sent = new SentFlusher((ids) => sql.sent(db, ids, token, now()), SENT_FLUSH_DELAY_MS);

  // One aggregate's rows in id order. A publisher with `publishChain` is given as many of them at
  // once as the window has room for; any other one row at a time, each after the previous one's
  // confirm.
  const runChain = async (chain: ClaimedRow[]) => {
    for (let index = 0; index < chain.length;) {
      // The slots first, so the checks below see the lease as it is when the publishes start.
      await window.acquire();
      let count = 1;
      while (publisher.publishesChains && index + count < chain.length && window.tryAcquire())
        count++;
      lease.heartbeat();
      if (context.isStopping() || nowMs() < outage.until || !lease.allowsPublish()) {
        window.release(count);
        releasedIds.push(...chain.slice(index).map((r) => r.id));
        return;
      }
      const round = outage.round;
      const part = chain.slice(index, index + count);
      const messages = part.map(toOutboundMessage);
      // A PRODUCER span per row, continuing the trace stored with it; the broker carries its context.
      const outcomes = await tracePublishes(
        messages.map((message) => ({
          headers: message.headers,
          info: {
            messageId: message.envelope.messageId,
            eventType: message.envelope.eventType,
            aggregateId: message.envelope.aggregateId,
          },
        })),
        (headers) =>
          publisher.publish(messages.map((message, i) => ({ ...message, headers: headers[i]! }))),
        (outcome) => (outcome.kind === 'failed' ? outcome.error : undefined),
      ).finally(() => window.release(count));
      for (let offset = 0; offset < part.length; offset++) {
        const row = part[offset]!;
        const message = messages[offset]!;
        const outcome = outcomes[offset]!;
        if (outcome.kind !== 'published') {
          if (outcome.kind === 'abandoned') abandonedIds.push(row.id);
          else await recordFailure(context, row, token, message, outcome.error, result, round);
          // The rest of this aggregate waits behind the row (publishChain stores no row after a
          // failed one; a row that went out anyway after a timeout goes again).
          for (const [later, laterRow] of part.entries())
            if (later > offset)
              (outcomes[later]!.kind === 'abandoned' ? abandonedIds : releasedIds).push(
                laterRow.id,
              );
          releasedIds.push(...chain.slice(index + count).map((r) => r.id));
          return;
        }
        outage.succeeded();
        sent.mark(row.id);
        result.published++;
        observe(() => hooks.onPublished?.(message));
      }
      index += count;
    }
  };

  const queue = [...chains];
  const workers = Array.from({ length: Math.min(config.maxInFlight, queue.length) }, async () => {
    for (let chain = queue.shift(); chain; chain = queue.shift()) await runChain(chain);
  });
  // Every chain runs to its end even if another failed to record its outcome. No await since the
  // claim returned, so another lane's claim sees this batch as publishing from then on.
  context.publishing.count++;
  const settled = await Promise.allSettled(workers).finally(() => context.publishing.count--);
  const handedOn = handOn ? await sent.takePending() : [];
  await sent.drain();
  context.unwritten.add({ ids: sent.unwritten, token });
  let failure: { readonly error: unknown } | undefined;
  try {
    await lease.settled();
    if (releasedIds.length > 0) await sql.release(db, releasedIds, token);
    if (abandonedIds.length > 0) await sql.abandon(db, abandonedIds, token, now());
  } catch (error) {
    failure = { error };
  }
  const rejected = settled.find(
    (outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected',
  );
  if (failure === undefined && rejected !== undefined) failure = { error: rejected.reason };
  if (failure === undefined && sent.errors.length > 0) failure = { error: sent.errors[0] };
  if (failure !== undefined) {
    // No claim follows a failed batch to carry them.
    if (handedOn.length > 0) await writeSentMarks(context, { ids: handedOn, token });
    throw failure.error;
  }
  result.released = releasedIds.length + abandonedIds.length;

  totals.batches++;
  for (const key of ['claimed', 'published', 'failed', 'dead', 'released'] as const)
    totals[key] += result[key];
  observe(() => hooks.onBatch?.(result));
  const { moreDue } = claimed;
  return handedOn.length > 0
    ? { result, moreDue, marks: { ids: handedOn, token } }
    : { result, moreDue };
}
