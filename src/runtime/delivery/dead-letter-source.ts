/**
 * Dead letters read back, whatever the transport: one record shape, one filter, and a source
 * every transport implements (RabbitMQ dead queues, Kafka dead-letter topics, the in-process
 * broker's list) through its own list and replay functions, so a replay keeps the messageId and
 * goes through the inbox again. The operator commands (`evgen dlq`, `evgen trace`) and the
 * delivery conformance suite read dead letters through it.
 */
/** One dead letter, transport-neutral. Absent fields were not recorded by whoever dead-lettered it. */
export interface DeadLetterRecord extends CommonDiagnostics {
  readonly transport: 'rabbitmq' | 'kafka' | 'pulsar' | 'in-process';
  readonly consumer: string;
  readonly messageId?: string;
  readonly eventType?: string;
  /** Where it was first published: exchange + routing key, or topic/partition/offset. */
  readonly origin?: string;
  /** A Kafka value in Confluent's wire format: its schema id (`body` is the JSON after it). */
  readonly schemaId?: number;
  readonly headers: Readonly<Record<string, unknown>>;
  readonly body: string;
}

export interface DeadLetterFilter {
  readonly messageId?: string;
  readonly eventType?: string;
  readonly errorType?: string;
  /** ISO-8601: dead-lettered at or after. */
  readonly since?: string;
  /** ISO-8601: dead-lettered before. */
  readonly until?: string;
}

/** Whether `record` passes every filter given; a time filter excludes records without a time. */
export function matchesDeadLetterFilter(
  record: DeadLetterRecord,
  filter: DeadLetterFilter,
): boolean {
  if (filter.messageId !== undefined && record.messageId !== filter.messageId) return false;
  if (filter.eventType !== undefined && record.eventType !== filter.eventType) return false;
  if (filter.errorType !== undefined && record.errorType !== filter.errorType) return false;
  const at = record.deadLetteredAt === undefined ? NaN : Date.parse(record.deadLetteredAt);
  if (filter.since !== undefined && !(at >= Date.parse(filter.since))) return false;
  if (filter.until !== undefined && !(at < Date.parse(filter.until))) return false;
  return true;
}

export interface DeadLetterReplayOutcome {
  readonly replayed: readonly string[];
  readonly kept: number;
}

/** A transport's dead letters, consumer by consumer. */
export interface DeadLetterSource {
  readonly transport: DeadLetterRecord['transport'];
  list(consumer: string): Promise<DeadLetterRecord[]>;
  /** Replays the consumer's letters for which `select` is true; the others stay. */
  replay(
    consumer: string,
    select: (record: DeadLetterRecord) => boolean,
  ): Promise<DeadLetterReplayOutcome>;
  /**
   * Dead queues/topics that `list` or `replay` found missing and counted as empty (a Kafka
   * dead-letter topic exists only once its consumer ran or the topology was set up).
   */
  missing(): readonly { readonly consumer: string; readonly deadQueue: string }[];
  close(): Promise<void>;
}

/**
 * The diagnostics every transport records with a dead letter (each transport's own diagnostics
 * type extends it with where the message came from); absent fields were not recorded.
 */
export interface CommonDiagnostics {
  /** The error's `name` (or `code`), e.g. `ValidationError`. */
  readonly errorType?: string;
  readonly errorMessage?: string;
  /** Handling attempts made, the first delivery included. */
  readonly attempts?: number;
  /** ISO-8601 times of the first and the last failed attempt. */
  readonly firstFailureAt?: string;
  readonly lastFailureAt?: string;
  readonly deadLetteredAt?: string;
  readonly traceId?: string;
  /** Earlier replays of this message. */
  readonly replays?: number;
}

/** One record from what every transport knows; fields left undefined are omitted, headers sorted by name. */
export function deadLetterRecord(letter: {
  readonly transport: DeadLetterRecord['transport'];
  readonly consumer: string;
  readonly messageId: string | undefined;
  readonly eventType: string | undefined;
  readonly diagnostics: CommonDiagnostics;
  readonly origin: string | undefined;
  readonly schemaId?: number;
  readonly headers: Readonly<Record<string, unknown>>;
  readonly body: string;
}): DeadLetterRecord {
  const d = letter.diagnostics;
  const entries: [string, unknown][] = [
    ['transport', letter.transport],
    ['consumer', letter.consumer],
    ['messageId', letter.messageId],
    ['eventType', letter.eventType],
    ['errorType', d.errorType],
    ['errorMessage', d.errorMessage],
    ['attempts', d.attempts],
    ['firstFailureAt', d.firstFailureAt],
    ['lastFailureAt', d.lastFailureAt],
    ['deadLetteredAt', d.deadLetteredAt],
    ['traceId', d.traceId],
    ['origin', letter.origin],
    ['replays', d.replays],
    ['schemaId', letter.schemaId],
    [
      'headers',
      Object.fromEntries(
        Object.entries(letter.headers).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
      ),
    ],
    ['body', letter.body],
  ];
  return Object.fromEntries(
    entries.filter(([, value]) => value !== undefined),
  ) as unknown as DeadLetterRecord;
}
