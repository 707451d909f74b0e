/**
 * What `evgen trace` finds about messageIds and how it prints it: the outbox row, the records on
 * the catalog's Kafka topics, the inbox rows per consumer and the dead letters (see trace.ts for
 * the command, trace-key.ts for `--key`).
 */
import type { Catalog } from '../../catalog/model.js';
import type { Database } from '../../runtime/db/database.js';
import { kafkaEvents } from '../../catalog/event-transports.js';
import type { InboxEntry } from '../../runtime/inbox/find-inbox-entries.js';
import type { FoundKafkaRecord } from '../../runtime/kafka/find-kafka-records.js';
import type { OutboxEventRecord } from '../../runtime/outbox/find-outbox-event.js';
import type { CdcServerProblem } from '../../runtime/errors.js';
import { formatCdcProblems } from '../cdc-problems.js';
import type { EvgenConfig } from '../config.js';
import { resolution, type ResolvedDeadLetter } from '../dead-letter-resolution.js';
import {
  kafkaDeadLetterSource,
  pulsarCliDeadLetterSource,
  rabbitDeadLetterSource,
} from '../dead-letter-sources.js';
import type {
  DeadLetterRecord,
  DeadLetterSource,
} from '../../runtime/delivery/dead-letter-source.js';
import {
  amqpUrl,
  kafkaBrokers,
  kafkaTiers,
  inboxTableOptions,
  outboxTableOptions,
  printable,
  pulsarTiers,
  pulsarUrl,
  topologyPrefix,
  type AmqpFlags,
  type DatabaseFlags,
  type KafkaFlags,
  type PulsarFlags,
} from '../operator-options.js';

/** Every transport whose connection is configured (RabbitMQ, Kafka, Pulsar). */
async function deadLetterSources(
  options: TraceOptions,
  config: EvgenConfig,
  catalog: Catalog,
): Promise<DeadLetterSource[]> {
  const sources: DeadLetterSource[] = [];
  const prefix = topologyPrefix(options, config);
  const url = amqpUrl(options);
  if (url !== undefined) sources.push(await rabbitDeadLetterSource(url, prefix));
  const brokers = kafkaBrokers(options);
  if (brokers !== undefined)
    sources.push(await kafkaDeadLetterSource(brokers, prefix, kafkaTiers(options, config)));
  const webServiceUrl = pulsarUrl(options);
  if (webServiceUrl !== undefined)
    sources.push(
      await pulsarCliDeadLetterSource(webServiceUrl, prefix, pulsarTiers(options), catalog),
    );
  return sources;
}

export interface TraceOptions extends DatabaseFlags, AmqpFlags, KafkaFlags, PulsarFlags {
  readonly events?: string;
  readonly config?: string;
  readonly json?: boolean;
  /** The services write a CDC outbox: no outbox row to look for (it is deleted at once). */
  readonly cdc?: boolean;
}

/** Everything known about one messageId. */
export interface MessageTrace {
  readonly messageId: string;
  /** `cdc`: a CDC outbox, whose rows go at once (the topic shows the publish). */
  readonly outboxKind: 'relay' | 'cdc';
  readonly outbox: OutboxEventRecord | null;
  /**
   * `cdc`: why a connector would not read what the CDC outbox's writers commit (empty: it
   * would); null for the polling relay's outbox or when this database has no CDC outbox.
   */
  readonly cdcProblems: readonly CdcServerProblem[] | null;
  readonly inbox: readonly InboxEntry[];
  /** Consumers of the catalog subscribed to the event type that have no inbox row for it. */
  readonly notHandledBy: readonly string[];
  /**
   * Consumers of the catalog subscribed to the event type (empty: nobody subscribes, so no inbox
   * row will come); null when the event type is unknown (not in the outbox, on a topic or in a
   * dead letter).
   */
  readonly subscribedBy: readonly string[] | null;
  /** The message's event type, from the outbox row, a published record or a dead letter. */
  readonly eventType: string | null;
  /**
   * null when no broker was given (not looked at). `resolved`: the letter's consumer has since
   * committed the message (e.g. its replay was handled).
   */
  readonly deadLetters: readonly ResolvedDeadLetter[] | null;
  /** Records carrying the messageId on the catalog's Kafka event topics; null without Kafka. */
  readonly published: readonly FoundKafkaRecord[] | null;
}

/** The records of `messageId` on every event topic of the catalog (with the deployment prefix). */
async function publishedRecords(
  options: TraceOptions,
  config: EvgenConfig,
  topics: readonly string[],
  messageId: string,
): Promise<FoundKafkaRecord[] | null> {
  const brokers = kafkaBrokers(options);
  if (brokers === undefined) return null;
  const [{ kafkajsClient }, { findKafkaRecordsByMessageId }] = await Promise.all([
    import('../../runtime/kafka/kafkajs-client.js'),
    import('../../runtime/kafka/find-kafka-records.js'),
  ]);
  const prefix = topologyPrefix(options, config);
  return findKafkaRecordsByMessageId({
    client: kafkajsClient({ brokers, clientId: 'evgen-cli' }),
    topics: [...new Set(topics)].sort().map((topic) => `${prefix}${topic}`),
    messageId,
  });
}

/** Whether the trace found the message anywhere (outbox, inbox, dead letters, a topic). */
export function traceFound(trace: MessageTrace): boolean {
  return (
    trace.outbox !== null ||
    trace.inbox.length > 0 ||
    (trace.deadLetters?.length ?? 0) > 0 ||
    (trace.published?.length ?? 0) > 0
  );
}

/** Every dead letter of the catalog's consumers on each configured transport; null with none. */
async function allDeadLetters(
  options: TraceOptions,
  config: EvgenConfig,
  catalog: Catalog,
): Promise<DeadLetterRecord[] | null> {
  const sources = await deadLetterSources(options, config, catalog);
  if (sources.length === 0) return null;
  const letters: DeadLetterRecord[] = [];
  for (const source of sources) {
    try {
      for (const consumer of catalog.consumers) {
        // A consumer not deployed on this transport has no dead queue/topic: nothing to show.
        letters.push(...(await source.list(consumer.name).catch(() => [])));
      }
    } finally {
      await source.close();
    }
  }
  return letters;
}

/**
 * The traces of `messageIds` (in that order), read from `db` and the configured brokers. The
 * dead letters are listed once for all of them.
 */
export async function traceMessages(
  messageIds: readonly string[],
  options: TraceOptions,
  config: EvgenConfig,
  catalog: Catalog,
  db: Database,
): Promise<MessageTrace[]> {
  const [{ findOutboxEvent }, { findInboxEntries }, { cdcOutboxProblems }] = await Promise.all([
    import('../../runtime/outbox/find-outbox-event.js'),
    import('../../runtime/inbox/find-inbox-entries.js'),
    import('../../runtime/outbox/cdc-outbox-status.js'),
  ]);
  const cdcProblems =
    options.cdc === true ? await cdcOutboxProblems(db, outboxTableOptions(options)) : null;
  const rows: { outbox: OutboxEventRecord | null; inbox: InboxEntry[] }[] = [];
  for (const messageId of messageIds) {
    rows.push({
      outbox:
        options.cdc === true
          ? null
          : ((await findOutboxEvent(db, messageId, outboxTableOptions(options))) ?? null),
      inbox: await findInboxEntries(db, messageId, inboxTableOptions(options)),
    });
  }
  const letters = messageIds.length === 0 ? null : await allDeadLetters(options, config, catalog);
  const traces: MessageTrace[] = [];
  for (const [i, messageId] of messageIds.entries()) {
    const { outbox, inbox } = rows[i]!;
    const deadLetters = letters?.filter((letter) => letter.messageId === messageId) ?? null;
    const published = await publishedRecords(
      options,
      config,
      kafkaEvents(catalog.events).map((event) => event.kafka.topic),
      messageId,
    );
    const eventType =
      outbox?.eventType ??
      published?.find((r) => r.eventType)?.eventType ??
      deadLetters?.find((l) => l.eventType)?.eventType;
    const handled = new Set(inbox.map((entry) => entry.consumer));
    const notHandledBy =
      eventType === undefined
        ? []
        : catalog.consumers
            .filter((c) => c.subscribes.includes(eventType) && !handled.has(c.name))
            .map((c) => c.name);
    traces.push({
      messageId,
      outboxKind: options.cdc === true ? 'cdc' : 'relay',
      outbox,
      cdcProblems,
      inbox,
      notHandledBy,
      eventType: eventType ?? null,
      subscribedBy:
        eventType === undefined
          ? null
          : catalog.consumers.filter((c) => c.subscribes.includes(eventType)).map((c) => c.name),
      deadLetters: deadLetters?.map((letter) => resolution(letter, inbox)) ?? null,
      published,
    });
  }
  return traces;
}

/** The trace as the lines `evgen trace` prints. */
export function formatTrace(trace: MessageTrace): string {
  const lines = [`messageId ${printable(trace.messageId)}`];
  const row = trace.outbox;
  if (row === null && trace.outboxKind === 'cdc') {
    lines.push('outbox: a CDC outbox (each row goes in the transaction that writes it)');
    lines.push(...formatCdcProblems(trace.cdcProblems));
  } else if (row === null) {
    lines.push(
      'outbox: no row (not written here, cleaned up after it was SENT, or written to a CDC outbox, whose rows go at once)',
    );
  } else {
    lines.push(
      `outbox: ${row.status}, ${row.eventType} v${row.schemaVersion}, aggregate ${row.aggregateType} ${row.aggregateId}`,
      `  written ${row.createdAt}, publish attempts ${row.attempts}${row.sentAt !== null ? `, sent ${row.sentAt}` : ''}`,
    );
    if (row.lastError !== null) lines.push(`  last error: ${row.lastError}`);
    if (row.status === 'DEAD')
      lines.push('  DEAD: later events of this aggregate wait; revive with evgen outbox revive');
  }
  if (trace.published === null) {
    lines.push('published: not looked at (give --kafka-brokers, or set KAFKA_BROKERS)');
  } else if (trace.published.length === 0) {
    lines.push("published: not on the catalog's Kafka event topics");
  } else {
    for (const record of trace.published) {
      lines.push(
        `published: ${record.topic} partition ${record.partition} offset ${record.offset}, key ${record.key ?? '-'}`,
      );
    }
    if (trace.published.length > 1)
      lines.push(
        `  ${trace.published.length} copies: sent again after a crash; the inbox handles it once`,
      );
  }
  if (trace.inbox.length === 0)
    lines.push(
      trace.subscribedBy?.length === 0
        ? `inbox: no consumer in the catalog subscribes to ${printable(trace.eventType ?? '')}, so none will commit it`
        : 'inbox: no consumer has committed it',
    );
  for (const entry of trace.inbox)
    lines.push(`inbox: ${entry.consumer} committed it at ${entry.processedAt ?? entry.receivedAt}`);
  for (const consumer of trace.notHandledBy)
    lines.push(`inbox: ${consumer} (subscribed) has not committed it`);
  if (trace.deadLetters === null) {
    lines.push(
      'dead letters: not looked at (give --amqp-url / --kafka-brokers / --pulsar-url, or set AMQP_URL / KAFKA_BROKERS / PULSAR_URL)',
    );
  } else if (trace.deadLetters.length === 0) {
    lines.push('dead letters: none');
  } else {
    for (const letter of trace.deadLetters) {
      lines.push(
        `dead letter: ${letter.consumer} (${letter.transport}), ${letter.errorType ?? 'error'}: ${letter.errorMessage ?? ''}`,
        `  handling attempts ${letter.attempts ?? '?'}, dead-lettered ${letter.deadLetteredAt ?? '?'}${letter.replays !== undefined ? `, replayed ${letter.replays}x before` : ''}`,
        letter.resolved
          ? `  resolved: ${letter.consumer} committed the message at ${letter.resolvedAt ?? '?'}`
          : '  unresolved: its consumer has not committed the message',
      );
    }
  }
  return `${lines.map(printable).join('\n')}\n`;
}
