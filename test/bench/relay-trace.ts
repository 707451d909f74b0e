/**
 * Where a relay → broker sample's wall time goes, seen from outside the relay: a Database and a
 * KafkaProducer wrapped to time each claim statement, SENT-mark UPDATE and send (with its record
 * count), so a bench can say how big the relay's sends are and how a claim compares with a send
 * without instrumenting the runtime. Statements are told apart by their text (PostgreSQL's
 * claim is one `WITH sent AS …` statement; MariaDB's is a transaction of several).
 */
import type { Database, KafkaProducer, QueryOptions } from '../../src/runtime/index.js';
import type { MysqlPoolLike } from '../../src/runtime/db/mysql-database.js';
import { median } from './bench-result.js';

interface Timing {
  readonly ms: number;
  readonly size: number;
  /** When it ended (performance.now()). */
  readonly end: number;
}

/** What one or more samples did: each send, claim statement and separate SENT-mark UPDATE. */
export interface TraceTimings {
  readonly sends: Timing[];
  readonly claims: Timing[];
  readonly marks: Timing[];
  /** Statements recorded with `record` (the MariaDB claim's, timed on its pool's connections). */
  readonly statements: { readonly key: string; readonly ms: number; readonly size: number }[];
}

export interface RelayTrace {
  /** `db` with every query timed. */
  readonly db: Database;
  /** `producer` with every send timed and counted. */
  readonly producer: KafkaProducer;
  /** Adds a statement's time (see traceMysqlPool). */
  record(text: string, ms: number, size?: number): void;
  /** What was recorded since the last take (and starts afresh). */
  take(): TraceTimings;
}

function kindOf(sql: string): 'claim' | 'sent' | 'other' {
  if (/^WITH (RECURSIVE )?sent AS/.test(sql)) return 'claim';
  if (sql.startsWith('UPDATE') && sql.includes("SET status = 'SENT'")) return 'sent';
  return 'other';
}

const describe = (label: string, timings: readonly Timing[], unit: string) => {
  if (timings.length === 0) return `${label}: none`;
  const sizes = timings.map((t) => t.size);
  const ms = timings.map((t) => t.ms);
  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
  return (
    `${label} ${timings.length}: ${unit} median ${median(sizes).toFixed(0)} ` +
    `(mean ${(sum(sizes) / timings.length).toFixed(1)}, max ${Math.max(...sizes)}), ` +
    `ms median ${median(ms).toFixed(1)} (p90 ${[...ms].sort((a, b) => a - b)[Math.floor(ms.length * 0.9)]!.toFixed(1)}, ` +
    `total ${sum(ms).toFixed(0)})`
  );
};

export function traceRelay(db: Database, producer: KafkaProducer): RelayTrace {
  let sends: Timing[] = [];
  let claims: Timing[] = [];
  let marks: Timing[] = [];
  let statements: TraceTimings['statements'] = [];
  const traced = Object.create(db) as Database & { query: Database['query'] };
  traced.query = async function <R>(
    text: string,
    params?: readonly unknown[],
    options?: QueryOptions,
  ) {
    const start = performance.now();
    // The options too: the relay names its PostgreSQL statements so that they are prepared.
    const result = await db.query<R>(text, params, options);
    const ms = performance.now() - start;
    const kind = kindOf(text.trimStart());
    const end = start + ms;
    if (kind === 'claim') claims.push({ ms, size: result.rows.length, end });
    else if (kind === 'sent') marks.push({ ms, size: result.rowCount, end });
    return result;
  };
  const tracedProducer: KafkaProducer = {
    async send(records) {
      const start = performance.now();
      await producer.send(records);
      const end = performance.now();
      sends.push({ ms: end - start, size: records.length, end });
    },
    ...(producer.probe !== undefined ? { probe: () => producer.probe!() } : {}),
    partitionFor: (key, count) => producer.partitionFor(key, count),
    close: () => producer.close(),
  };
  return {
    db: traced,
    producer: tracedProducer,
    record(text, ms, size = 0) {
      statements.push({ key: statementKey(text), ms, size });
    },
    take() {
      const taken = { sends, claims, marks, statements };
      statements = [];
      sends = [];
      claims = [];
      marks = [];
      return taken;
    },
  };
}

/**
 * A mysql2 pool whose pooled connections time every statement (SET TRANSACTION, START
 * TRANSACTION and COMMIT included, which the Database adapter sends itself) and each wait for a
 * connection, into `record`.
 */
export function traceMysqlPool(
  pool: MysqlPoolLike,
  record: (text: string, ms: number, size: number) => void,
): MysqlPoolLike {
  return {
    query: (sql, values) => pool.query(sql, values),
    async getConnection() {
      const asked = performance.now();
      const connection = await pool.getConnection();
      record('(wait for a pooled connection)', performance.now() - asked, 0);
      return {
        async query(sql, values) {
          const start = performance.now();
          const result = await connection.query(sql, values);
          const [rows] = result;
          const size = Array.isArray(rows)
            ? rows.length
            : ((rows as { affectedRows?: number }).affectedRows ?? 0);
          record(sql, performance.now() - start, size);
          return result;
        },
        release: () => connection.release(),
        destroy: () => connection.destroy(),
      };
    },
  };
}

/** A statement told by its first words, without identifiers (`UPDATE … SET status`, `SELECT CAST(o.id`). */
function statementKey(text: string): string {
  return text
    .trim()
    .replace(/`[^`]*`(\.`[^`]*`)?/g, '…')
    .replace(/\s+/g, ' ')
    .slice(0, 32);
}

/** Per statement kind recorded: count, median and total ms (all samples). */
export function describeStatements(samples: readonly TraceTimings[]): string {
  const byKey = new Map<string, { ms: number[]; sizes: number[] }>();
  for (const { key, ms, size } of samples.flatMap((sample) => sample.statements)) {
    const entry = byKey.get(key) ?? { ms: [], sizes: [] };
    entry.ms.push(ms);
    entry.sizes.push(size);
    byKey.set(key, entry);
  }
  return [...byKey]
    .map(
      ([key, { ms, sizes }]) =>
        `${key}: ${ms.length}×, median ${median(ms).toFixed(2)} ms, total ${ms.reduce((a, b) => a + b, 0).toFixed(0)} ms, rows median ${median(sizes)} (min ${Math.min(...sizes)})`,
    )
    .join('\n  ');
}

/** Median ms from the latest `before` that ended before each `after` started (within a sample). */
function medianGap(
  samples: readonly TraceTimings[],
  before: 'sends' | 'claims',
  after: 'sends' | 'claims',
): string {
  const gaps: number[] = [];
  for (const sample of samples)
    for (const next of sample[after]) {
      const started = next.end - next.ms;
      const ended = sample[before].filter((t) => t.end <= started).map((t) => t.end);
      if (ended.length > 0) gaps.push(started - Math.max(...ended));
    }
  return gaps.length === 0 ? '–' : median(gaps).toFixed(1);
}

/**
 * One line: sends (records per send, ms), claims (rows, ms), separate SENT marks (rows, ms), and
 * the gaps on a lane's path: claim end → the next send's start (rows turned into records and
 * queued), send end → the next claim's start (confirms handled, batch finished).
 */
export function describeTrace(samples: readonly TraceTimings[]): string {
  const all = (key: 'sends' | 'claims' | 'marks') => samples.flatMap((sample) => sample[key]);
  const gaps =
    all('claims').length === 0
      ? []
      : [
          `gap claim end → next send start median ${medianGap(samples, 'claims', 'sends')} ms, ` +
            `send end → next claim start ${medianGap(samples, 'sends', 'claims')} ms`,
        ];
  return [
    describe('sends', all('sends'), 'records'),
    describe('claims', all('claims'), 'rows'),
    describe('separate SENT UPDATEs', all('marks'), 'rows'),
    ...gaps,
  ].join('; ');
}
