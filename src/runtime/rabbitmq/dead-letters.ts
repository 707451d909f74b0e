/**
 * A consumer's dead queue: `listDeadLetters` shows what is there and why;
 * `replayDeadLetters` sends letters back once the cause is fixed (a replay goes through the same
 * inbox guard and never mints a new messageId).
 *
 * Each selected letter is republished, with its body, messageId and properties unchanged, to the
 * consumer's own work queue only (default exchange, routed by queue name: other consumers of the
 * event never see it). Its attempt counter starts again at 1 and the dead-letter diagnostics are
 * dropped (the last error stays in `x-evgen-last-error*`). The dead letter is acked only after
 * the copy was confirmed and routed; a letter that is not selected, or whose copy failed, stays
 * in the dead queue. The consumer runner then hands the copy to the inbox-guarded handler, which
 * skips it as a duplicate if that consumer already handled the messageId.
 */
import type { CommonDiagnostics } from '../delivery/dead-letter-source.js';
import type { GetMessage, MessageProperties } from 'amqplib';
import { copyPublishProperties, EVGEN_HEADERS, headerString } from './amqp-message.js';
import { ConfirmedPublisher } from './confirmed-publisher.js';
import { currentConnection, type ConnectionSource } from './connector.js';
import type { ConsumerRoutes } from './topology.js';

/** What evgen recorded when it dead-lettered a message; absent fields were not recorded. */
export interface DeadLetterDiagnostics extends CommonDiagnostics {
  readonly consumer?: string;
  readonly originalExchange?: string;
  readonly originalRoutingKey?: string;
}

/** One dead letter: the original body and headers, and evgen's diagnostics read from them. */
export interface DeadLetter {
  /** The AMQP messageId property (= the envelope's messageId for every evgen message). */
  readonly messageId: string | undefined;
  /** The AMQP `type` property (the event type for evgen messages). */
  readonly eventType: string | undefined;
  readonly content: Buffer;
  /** Headers as stored, diagnostics included (`x-evgen-error-type`, `x-evgen-attempts`, …). */
  readonly headers: Readonly<Record<string, unknown>>;
  /** All AMQP properties as stored. */
  readonly properties: MessageProperties;
  readonly diagnostics: DeadLetterDiagnostics;
}

export interface ListDeadLettersOptions {
  /** An open AMQP connection or a connector (`createAmqpConnector`). */
  readonly connection: ConnectionSource;
  /** The consumer's queues (`topology.consumers[name]`): its dead queue is read, its work queue takes replays. */
  readonly routes: ConsumerRoutes;
  /** Looks at most at this many letters; default: the dead queue's length when the call starts. */
  readonly limit?: number;
}

export interface ReplayDeadLettersOptions extends ListDeadLettersOptions {
  /** Replays only letters for which this returns true; default: every letter. */
  readonly filter?: (letter: DeadLetter) => boolean;
}

export interface ReplayDeadLettersResult {
  /** messageIds sent back to the work queue, in dead-queue order. */
  readonly replayed: readonly string[];
  /** Letters looked at and left in the dead queue (not selected). */
  readonly kept: number;
}

/**
 * Headers that describe one dead-lettering; a replayed copy starts without them (a fresh attempt
 * count, and a fresh gap wait: replayed versions may come back in any order and must wait for
 * each other again).
 */
const DEAD_LETTER_HEADERS: readonly string[] = [
  EVGEN_HEADERS.attempt,
  EVGEN_HEADERS.gapSince,
  EVGEN_HEADERS.gapExpected,
  EVGEN_HEADERS.gapFirst,
  EVGEN_HEADERS.errorType,
  EVGEN_HEADERS.errorMessage,
  EVGEN_HEADERS.attempts,
  EVGEN_HEADERS.consumer,
  EVGEN_HEADERS.deadLetteredAt,
];
/** Broker dead-letter history (present when the broker itself dead-lettered, e.g. a delivery limit). */
const BROKER_HEADERS = /^x-(death|first-death-|last-death-)/;

function headerNumber(
  headers: Readonly<Record<string, unknown>>,
  name: string,
): number | undefined {
  const value = headers[name];
  const number = typeof value === 'number' ? value : Number(headerString(headers, name) ?? NaN);
  return Number.isFinite(number) ? number : undefined;
}

/** Reads evgen's dead-letter headers. */
export function deadLetterDiagnostics(
  headers: Readonly<Record<string, unknown>>,
): DeadLetterDiagnostics {
  const text = (name: string) => headerString(headers, name);
  const entries: [keyof DeadLetterDiagnostics, string | number | undefined][] = [
    ['consumer', text(EVGEN_HEADERS.consumer)],
    ['errorType', text(EVGEN_HEADERS.errorType)],
    ['errorMessage', text(EVGEN_HEADERS.errorMessage)],
    ['attempts', headerNumber(headers, EVGEN_HEADERS.attempts)],
    ['firstFailureAt', text(EVGEN_HEADERS.firstFailureAt)],
    ['lastFailureAt', text(EVGEN_HEADERS.lastFailureAt)],
    ['deadLetteredAt', text(EVGEN_HEADERS.deadLetteredAt)],
    ['traceId', text(EVGEN_HEADERS.traceId)],
    ['originalExchange', text(EVGEN_HEADERS.originalExchange)],
    ['originalRoutingKey', text(EVGEN_HEADERS.originalRoutingKey)],
    ['replays', headerNumber(headers, EVGEN_HEADERS.replays)],
  ];
  return Object.fromEntries(entries.filter(([, value]) => value !== undefined));
}

function toDeadLetter(message: GetMessage): DeadLetter {
  const headers = message.properties.headers ?? {};
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
  return {
    messageId: text(message.properties.messageId),
    eventType: text(message.properties.type),
    content: message.content,
    headers,
    properties: message.properties,
    diagnostics: deadLetterDiagnostics(headers),
  };
}

/**
 * Visits up to `limit` letters of the dead queue, each taken unacked so none is seen twice.
 * `visit` returns true when it has settled (acked) the letter; the others, and every letter
 * still unacked when `visit` throws, go back to the dead queue, each released once.
 */
async function visitDeadLetters(
  options: ListDeadLettersOptions,
  visit: (letter: DeadLetter, ack: () => void) => Promise<void>,
): Promise<void> {
  const model = await currentConnection(options.connection);
  const channel = await model.createChannel();
  // A failed operation closes the channel with an error event; the awaited call rejects anyway.
  channel.on('error', () => undefined);
  const held: GetMessage[] = [];
  try {
    const { messageCount } = await channel.checkQueue(options.routes.deadQueue);
    const limit = Math.min(messageCount, options.limit ?? messageCount);
    for (let taken = 0; taken < limit; taken++) {
      const message = await channel.get(options.routes.deadQueue, { noAck: false });
      if (message === false) break;
      let acked = false;
      await visit(toDeadLetter(message), () => {
        channel.ack(message);
        acked = true;
      });
      if (!acked) held.push(message);
    }
    // Released once each (never in a loop): they return to the dead queue in their order.
    for (const message of held) channel.nack(message, false, true);
  } finally {
    // Closing also returns any letter still unacked (e.g. after a failed copy) to the dead queue.
    await channel.close().catch(() => undefined);
  }
}

/**
 * The letters in a consumer's dead queue, oldest first, with their diagnostics. Nothing is
 * removed: each letter is taken unacked and released again. For "was messageId X dead-lettered,
 * and why?" and for choosing what to replay.
 */
export async function listRabbitMqDeadLetters(
  options: ListDeadLettersOptions,
): Promise<DeadLetter[]> {
  const letters: DeadLetter[] = [];
  await visitDeadLetters(options, async (letter) => {
    letters.push(letter);
  });
  return letters;
}

/** Headers of the replayed copy: the letter's, minus one-dead-lettering diagnostics, plus a replay count. */
export function replayHeaders(
  headers: Readonly<Record<string, unknown>>,
  now: Date = new Date(),
): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!DEAD_LETTER_HEADERS.includes(name) && !BROKER_HEADERS.test(name)) copy[name] = value;
  }
  const previous = Number(
    headerString(headers, EVGEN_HEADERS.replays) ?? headers[EVGEN_HEADERS.replays] ?? 0,
  );
  copy[EVGEN_HEADERS.replays] = (Number.isInteger(previous) && previous > 0 ? previous : 0) + 1;
  copy[EVGEN_HEADERS.replayedAt] = now.toISOString();
  return copy;
}

/**
 * Replays a consumer's dead letters into its work queue (see the module comment). Rejects on the
 * first copy that is not confirmed; the letters not yet replayed stay in the dead queue.
 */
export async function replayRabbitMqDeadLetters(
  options: ReplayDeadLettersOptions,
): Promise<ReplayDeadLettersResult> {
  const model = await currentConnection(options.connection);
  const publisher = new ConfirmedPublisher(model);
  const replayed: string[] = [];
  let kept = 0;
  try {
    await visitDeadLetters(options, async (letter, ack) => {
      if (options.filter !== undefined && !options.filter(letter)) {
        kept++;
        return;
      }
      const properties = copyPublishProperties(letter.properties, replayHeaders(letter.headers));
      // The default exchange routes by queue name: only this consumer's work queue gets the copy.
      await publisher.publish('', options.routes.queue, letter.content, properties);
      ack();
      replayed.push(properties.messageId);
    });
  } finally {
    await publisher.close();
  }
  return { replayed, kept };
}

/**
 * @deprecated Renamed `listRabbitMqDeadLetters`, beside `listKafkaDeadLetters`; this name is
 * removed in the next release.
 */
export const listDeadLetters = listRabbitMqDeadLetters;
/**
 * @deprecated Renamed `replayRabbitMqDeadLetters`, beside `replayKafkaDeadLetters`; this name is
 * removed in the next release.
 */
export const replayDeadLetters = replayRabbitMqDeadLetters;
