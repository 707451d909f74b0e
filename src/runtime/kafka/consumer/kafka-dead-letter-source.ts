/**
 * Kafka's dead-letter source: a consumer's dead-letter topic, read in a throwaway consumer group
 * and replayed into its first retry topic by kafka-dead-letters.ts. A dead-letter topic exists
 * only once it was created with its consumer's topics (by the service or a set-up script): before
 * that the consumer has no dead letters, which is not an error, and `missing()` names it.
 */
import {
  deadLetterRecord,
  type DeadLetterRecord,
  type DeadLetterSource,
} from '../../delivery/dead-letter-source.js';
import { readConfluentFrame } from '../confluent-framing.js';
import type { KafkaClient } from '../kafka-client.js';
import type { KafkaConsumerRoutes } from './kafka-consumer-types.js';
import {
  listKafkaDeadLetters,
  replayKafkaDeadLetters,
  type KafkaDeadLetter,
} from './kafka-dead-letters.js';
import { readableKafkaHeaders } from './readable-headers.js';

export interface KafkaDeadLetterSourceOptions {
  /** The Kafka client adapter; each list and replay reads in a throwaway consumer group. */
  readonly client: KafkaClient;
  /** A consumer's group and topics: `kafkaConsumerRoutes(kafkaTopology, consumer)`. */
  readonly routes: (
    consumer: string,
  ) => Pick<KafkaConsumerRoutes, 'groupId' | 'deadLetter' | 'retry'>;
}

function fromKafka(consumer: string, letter: KafkaDeadLetter): DeadLetterRecord {
  const d = letter.diagnostics;
  // Shown as its schema id and the JSON, not as five bytes of binary before the text.
  const frame = readConfluentFrame(letter.value);
  return deadLetterRecord({
    transport: 'kafka',
    consumer,
    messageId: letter.messageId,
    eventType: letter.eventType,
    diagnostics: d,
    origin:
      d.originalTopic !== undefined
        ? `topic ${d.originalTopic}, partition ${d.originalPartition ?? '?'}, offset ${d.originalOffset ?? '?'}`
        : undefined,
    headers: readableKafkaHeaders(letter.headers),
    schemaId: frame?.schemaId,
    body:
      frame !== undefined
        ? Buffer.from(frame.data.buffer, frame.data.byteOffset, frame.data.byteLength).toString(
            'utf8',
          )
        : (letter.value?.toString('utf8') ?? ''),
  });
}

export function kafkaDeadLetterSource(options: KafkaDeadLetterSourceOptions): DeadLetterSource {
  const { client } = options;
  let topics: Promise<Set<string>> | undefined;
  const missing = new Map<string, string>();
  const exists = async (consumer: string, topic: string) => {
    topics ??= (async () => {
      const admin = await client.admin();
      try {
        return new Set(await admin.listTopics());
      } finally {
        await admin.close();
      }
    })();
    if ((await topics).has(topic)) return true;
    missing.set(consumer, topic);
    return false;
  };
  return {
    transport: 'kafka',
    async list(consumer) {
      const routes = options.routes(consumer);
      if (!(await exists(consumer, routes.deadLetter))) return [];
      const letters = await listKafkaDeadLetters({ client, routes });
      return letters.map((letter) => fromKafka(consumer, letter));
    },
    async replay(consumer, select) {
      const routes = options.routes(consumer);
      if (!(await exists(consumer, routes.deadLetter))) return { replayed: [], kept: 0 };
      const result = await replayKafkaDeadLetters({
        client,
        routes,
        filter: (letter) => select(fromKafka(consumer, letter)),
      });
      return { replayed: result.replayed, kept: result.kept };
    },
    missing: () => [...missing].map(([consumer, deadQueue]) => ({ consumer, deadQueue })),
    // The list and replay functions close the consumers and producers they open.
    close: () => Promise.resolve(),
  };
}
