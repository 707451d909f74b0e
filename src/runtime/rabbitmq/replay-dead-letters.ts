/**
 * Sends dead letters back to their consumer once the cause is fixed (design notes §5: a replay
 * goes through the same inbox guard and never mints a new messageId).
 *
 * Each selected letter is republished, with its body, messageId and properties unchanged, to the
 * consumer's own work queue only (default exchange, routed by queue name: other consumers of the
 * event never see it). Its attempt counter starts again at 1 and the dead-letter diagnostics are
 * dropped (the last error stays in `x-evgen-last-error*`). The dead letter is acked only after
 * the copy was confirmed and routed; a letter that is not selected, or whose copy failed, stays
 * in the dead queue. The consumer runner then hands the copy to the inbox-guarded handler, which
 * skips it as a duplicate if that consumer already handled the messageId.
 */
import type { GetMessage } from 'amqplib';
import { copyPublishProperties, EVGEN_HEADERS, headerString } from './amqp-message.js';
import { ConfirmedPublisher } from './confirmed-publisher.js';
import { currentConnection, type ConnectionSource } from './connector.js';
import type { ConsumerRoutes } from './topology.js';

/** One dead letter as the filter sees it. */
export interface DeadLetter {
  /** The AMQP messageId property (= the envelope's messageId for every evgen message). */
  readonly messageId: string | undefined;
  readonly content: Buffer;
  /** Headers as stored, diagnostics included (`x-evgen-error-type`, `x-evgen-attempts`, …). */
  readonly headers: Readonly<Record<string, unknown>>;
}

export interface ReplayDeadLettersOptions {
  /** A connection or connector; the replay opens its own channels and closes them. */
  readonly connection: ConnectionSource;
  /** The consumer whose dead queue is replayed, from `resolveTopology(...).consumers[name]`. */
  readonly routes: ConsumerRoutes;
  /** Replays only letters for which this returns true; default: every letter. */
  readonly filter?: (letter: DeadLetter) => boolean;
  /** Looks at most at this many letters; default: the dead queue's length when the replay starts. */
  readonly limit?: number;
}

export interface ReplayDeadLettersResult {
  /** messageIds sent back to the work queue, in dead-queue order. */
  readonly replayed: readonly string[];
  /** Letters looked at and left in the dead queue (not selected). */
  readonly kept: number;
}

/** Headers that describe one dead-lettering; a replayed copy starts without them. */
const DEAD_LETTER_HEADERS: readonly string[] = [
  EVGEN_HEADERS.attempt,
  EVGEN_HEADERS.errorType,
  EVGEN_HEADERS.errorMessage,
  EVGEN_HEADERS.attempts,
  EVGEN_HEADERS.consumer,
  EVGEN_HEADERS.deadLetteredAt,
];
/** Broker dead-letter history (present when the broker itself dead-lettered, e.g. a delivery limit). */
const BROKER_HEADERS = /^x-(death|first-death-|last-death-)/;

/** Headers of the replayed copy: the letter's, minus one-dead-lettering diagnostics, plus a replay count. */
export function replayHeaders(headers: Readonly<Record<string, unknown>>, now: Date = new Date()): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!DEAD_LETTER_HEADERS.includes(name) && !BROKER_HEADERS.test(name)) copy[name] = value;
  }
  const previous = Number(headerString(headers, EVGEN_HEADERS.replays) ?? headers[EVGEN_HEADERS.replays] ?? 0);
  copy[EVGEN_HEADERS.replays] = (Number.isInteger(previous) && previous > 0 ? previous : 0) + 1;
  copy[EVGEN_HEADERS.replayedAt] = now.toISOString();
  return copy;
}

/**
 * Replays a consumer's dead letters into its work queue (see the module comment). Rejects on the
 * first copy that is not confirmed; the letters not yet replayed stay in the dead queue.
 */
export async function replayDeadLetters(options: ReplayDeadLettersOptions): Promise<ReplayDeadLettersResult> {
  const { routes } = options;
  const model = await currentConnection(options.connection);
  const channel = await model.createChannel();
  // A failed operation closes the channel with an error event; the awaited call rejects anyway.
  channel.on('error', () => undefined);
  const publisher = new ConfirmedPublisher(model);
  const kept: GetMessage[] = [];
  const replayed: string[] = [];
  try {
    const { messageCount } = await channel.checkQueue(routes.deadQueue);
    const limit = Math.min(messageCount, options.limit ?? messageCount);
    for (let taken = 0; taken < limit; taken++) {
      // Unacked letters stay with this channel until acked or released, so none is seen twice.
      const message = await channel.get(routes.deadQueue, { noAck: false });
      if (message === false) break;
      const headers = message.properties.headers ?? {};
      const messageId = typeof message.properties.messageId === 'string' ? message.properties.messageId : undefined;
      if (options.filter !== undefined && !options.filter({ messageId, content: message.content, headers })) {
        kept.push(message);
        continue;
      }
      const properties = copyPublishProperties(message.properties, replayHeaders(headers));
      // The default exchange routes by queue name: only this consumer's work queue gets the copy.
      await publisher.publish('', routes.queue, message.content, properties);
      channel.ack(message);
      replayed.push(properties.messageId);
    }
    // Released once each (never in a loop): they return to the dead queue.
    for (const message of kept) channel.nack(message, false, true);
    return { replayed, kept: kept.length };
  } finally {
    await publisher.close();
    // Closing also returns any letter still unacked (e.g. after a failed copy) to the dead queue.
    await channel.close().catch(() => undefined);
  }
}
