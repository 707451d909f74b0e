/** RabbitMQ's dead-letter source: a consumer's dead queue, read and replayed by dead-letters.ts. */
import type { ConnectionSource } from './confirmed-publisher.js';
import {
  deadLetterRecord,
  type DeadLetterRecord,
  type DeadLetterSource,
} from '../delivery/dead-letter-source.js';
import {
  listRabbitMqDeadLetters,
  replayRabbitMqDeadLetters,
  type DeadLetter,
} from './dead-letters.js';
import type { ConsumerRoutes } from './topology.js';

export interface RabbitMqDeadLetterSourceOptions {
  /** An open connection or a connector; the caller closes it (the source's `close` leaves it open). */
  readonly connection: ConnectionSource;
  /** A consumer's routes: `resolveTopology(…).consumers[consumer]`. */
  readonly routes: (consumer: string) => ConsumerRoutes;
}

/** Printable text of a header value (AMQP long strings arrive as Buffers). */
function headerText(value: unknown): unknown {
  return Buffer.isBuffer(value) ? value.toString('utf8') : value;
}

function fromRabbit(consumer: string, letter: DeadLetter): DeadLetterRecord {
  const d = letter.diagnostics;
  return deadLetterRecord({
    transport: 'rabbitmq',
    consumer,
    messageId: letter.messageId,
    eventType: letter.eventType,
    diagnostics: d,
    origin:
      d.originalExchange !== undefined || d.originalRoutingKey !== undefined
        ? `exchange ${d.originalExchange ?? '(default)'}, routing key ${d.originalRoutingKey ?? ''}`
        : undefined,
    headers: Object.fromEntries(
      Object.entries(letter.headers).map(([name, value]) => [name, headerText(value)]),
    ),
    body: letter.content.toString('utf8'),
  });
}

/** Dead queues (`<prefix><consumer>.dead`); a missing one is an error (its consumer declares it). */
export function rabbitMqDeadLetterSource(
  options: RabbitMqDeadLetterSourceOptions,
): DeadLetterSource {
  const { connection } = options;
  return {
    transport: 'rabbitmq',
    async list(consumer) {
      const letters = await listRabbitMqDeadLetters({
        connection,
        routes: options.routes(consumer),
      });
      return letters.map((letter) => fromRabbit(consumer, letter));
    },
    replay: (consumer, select) =>
      replayRabbitMqDeadLetters({
        connection,
        routes: options.routes(consumer),
        filter: (letter) => select(fromRabbit(consumer, letter)),
      }),
    missing: () => [],
    close: () => Promise.resolve(),
  };
}
