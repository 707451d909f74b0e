/**
 * `evgen trace --key <idempotency-key>`: one HTTP request by the Idempotency-Key its client
 * sent. Its stored row (status, fingerprint, executions, created/completed, the lease of one in
 * flight, the stored response) and every event it wrote, each traced as `evgen trace <messageId>`
 * traces it (outbox, published records, inbox rows per consumer, dead letters).
 *
 * The events are found two ways, so cleaned-up outbox rows do not hide them: outbox rows whose
 * `idempotency-key` header is the key, and the request's derived messageIds (key + fingerprint +
 * position, see requestEventMessageId), followed position by position while the outbox or an
 * inbox knows them.
 * Exit 0 found, 1 found nowhere, 2 bad input (a malformed key, a missing idempotency table).
 */
import { printableJson } from '../../diagnostics/printable.js';
import type { Database } from '../../runtime/db/database.js';
import type { IdempotencyKeyRecord } from '../../runtime/idempotency/find-idempotency-key.js';
import {
  IdempotencyKeyError,
  parseIdempotencyKey,
} from '../../runtime/idempotency/idempotency-key.js';
import { idempotencyTableNames } from '../../runtime/idempotency/idempotency-table.js';
import { refuse } from '../command-support.js';
import { loadConfig } from '../config.js';
import { EXIT_FINDINGS, EXIT_OK } from '../exit-codes.js';
import {
  inboxTableOptions,
  isMissingTable,
  outboxTableOptions,
  printable,
  withDatabase,
} from '../operator-options.js';
import { loadProjectCatalog } from '../project-catalog.js';
import {
  formatTrace,
  traceFound,
  traceMessages,
  type MessageTrace,
  type TraceOptions,
} from './message-trace.js';

export interface KeyTraceOptions extends TraceOptions {
  readonly key?: string;
  readonly idempotencyTable?: string;
}

/** One event a request wrote. */
export interface KeyTraceEvent {
  /** Its position among the request's events when its messageId is the derived one, else null. */
  readonly position: number | null;
  /** Its outbox row carries the key in the `idempotency-key` header. */
  readonly keyHeader: boolean;
  readonly trace: MessageTrace;
}

/** Everything known about one Idempotency-Key. */
export interface KeyTrace {
  readonly key: string;
  /** The key's row; null when there is none (never used here, released, or pruned). */
  readonly request: IdempotencyKeyRecord | null;
  readonly events: readonly KeyTraceEvent[];
}

/** Derived positions followed at most (a request writing more events than this is not plausible). */
const MAX_POSITIONS = 10_000;

/** The key as the client sent it, checked like the adapters check the header. */
function checkedKey(key: string): string {
  try {
    return parseIdempotencyKey(key);
  } catch (error) {
    if (!(error instanceof IdempotencyKeyError)) throw error;
    throw refuse({
      code: 'idempotency-key-invalid',
      file: '--key',
      message: error.message,
      hint: 'give the key exactly as the client sent it in its Idempotency-Key header',
    });
  }
}

/** The key's row; a missing table (or schema) is refused by name instead of "not found". */
async function keyRecord(
  db: Database,
  key: string,
  options: KeyTraceOptions,
): Promise<IdempotencyKeyRecord | undefined> {
  const { findIdempotencyKey } = await import('../../runtime/idempotency/find-idempotency-key.js');
  const tableOptions = {
    ...(options.schema !== undefined ? { schema: options.schema } : {}),
    ...(options.idempotencyTable !== undefined ? { table: options.idempotencyTable } : {}),
  };
  try {
    return await findIdempotencyKey(db, key, tableOptions);
  } catch (error) {
    if (!isMissingTable(error)) throw error;
    throw refuse({
      code: 'idempotency-table-missing',
      file: '--idempotency-table',
      message: `no idempotency table ${idempotencyTableNames(tableOptions, db.dialect).table} in this database`,
      hint: 'the services create it with migrateIdempotency (or the SQL of idempotencyMigrationSql); point --schema / --idempotency-table at the one they use',
    });
  }
}

/** The messageIds the request wrote: header-carrying outbox rows, then derived ids found. */
async function requestEvents(
  db: Database,
  key: string,
  record: IdempotencyKeyRecord | undefined,
  options: KeyTraceOptions,
): Promise<{ messageId: string; position: number | null; keyHeader: boolean }[]> {
  const [
    { findOutboxEventIdsByKey },
    { requestEventMessageId },
    { findOutboxEvent },
    { findInboxEntries },
  ] = await Promise.all([
    import('../../runtime/idempotency/find-idempotency-key.js'),
    import('../../runtime/idempotency/request-event-ids.js'),
    import('../../runtime/outbox/find-outbox-event.js'),
    import('../../runtime/inbox/find-inbox-entries.js'),
  ]);
  const withHeader =
    options.cdc === true ? [] : await findOutboxEventIdsByKey(db, key, outboxTableOptions(options));
  const derived = new Map<string, number>();
  if (record !== undefined) {
    for (let position = 0; position < MAX_POSITIONS; position++) {
      const messageId = requestEventMessageId(key, record.requestHash, position);
      const known =
        withHeader.includes(messageId) ||
        (options.cdc !== true &&
          (await findOutboxEvent(db, messageId, outboxTableOptions(options))) !== undefined) ||
        (await findInboxEntries(db, messageId, inboxTableOptions(options))).length > 0;
      if (!known) break;
      derived.set(messageId, position);
    }
  }
  const ids = [...derived.keys(), ...withHeader.filter((id) => !derived.has(id))];
  return ids.map((messageId) => ({
    messageId,
    position: derived.get(messageId) ?? null,
    keyHeader: withHeader.includes(messageId),
  }));
}

export async function runKeyTrace(rawKey: string, options: KeyTraceOptions): Promise<number> {
  const key = checkedKey(rawKey);
  const config = await loadConfig(options);
  const { catalog } = await loadProjectCatalog(config);
  const trace = await withDatabase(options, async (db): Promise<KeyTrace> => {
    const record = await keyRecord(db, key, options);
    const found = await requestEvents(db, key, record, options);
    const traces = await traceMessages(
      found.map((event) => event.messageId),
      options,
      config,
      catalog,
      db,
    );
    return {
      key,
      request: record ?? null,
      events: found.map(({ position, keyHeader }, i) => ({
        position,
        keyHeader,
        trace: traces[i]!,
      })),
    };
  });
  process.stdout.write(options.json === true ? `${printableJson(trace)}\n` : formatKeyTrace(trace));
  return trace.request !== null || trace.events.some((event) => traceFound(event.trace))
    ? EXIT_OK
    : EXIT_FINDINGS;
}

/** The stored response's status and body, shortened for one line. */
function storedResponse(response: string): string {
  const limit = 300;
  let text = response;
  try {
    const parsed = JSON.parse(response) as { status?: unknown; body?: unknown };
    if (typeof parsed.status === 'number')
      text = `HTTP ${parsed.status} ${JSON.stringify(parsed.body) ?? ''}`.trimEnd();
  } catch {
    // Not JSON (written by something else): shown as stored.
  }
  return text.length > limit ? `${text.slice(0, limit)}… (${text.length} characters)` : text;
}

/** The key trace as the lines `evgen trace --key` prints. */
export function formatKeyTrace(trace: KeyTrace): string {
  const lines = [`idempotency key ${trace.key}`];
  const request = trace.request;
  if (request === null) {
    lines.push(
      'request: no row for this key (never used here, released after a failed or 5xx execution, or pruned after its retention)',
    );
  } else {
    lines.push(
      `request: ${request.status}, fingerprint ${request.requestHash}, executions ${request.attempts}`,
      `  created ${request.createdAt}${request.completedAt !== null ? `, completed ${request.completedAt}` : ''}`,
    );
    if (request.status === 'IN_PROGRESS')
      lines.push(
        `  leased until ${request.lockedUntil ?? '?'}: until then a retry is answered 409; after it the next retry executes again (its process died before committing)`,
      );
    if (request.response !== null)
      lines.push(`  stored response: ${storedResponse(request.response)}`);
    if (request.attempts > 1)
      lines.push(
        `  ${request.attempts} executions: earlier ones died before committing (their writes were rolled back); their events had the same messageIds`,
      );
  }
  if (trace.events.length === 0) {
    lines.push(
      request?.status === 'IN_PROGRESS'
        ? 'events: none committed yet'
        : 'events: none found (the request wrote none, or their outbox rows were cleaned up and no consumer has committed them)',
    );
  } else {
    lines.push(`events: ${trace.events.length} written by this request`);
  }
  const out = `${lines.map(printable).join('\n')}\n`;
  return (
    out +
    trace.events
      .map((event, i) => {
        const how = [
          event.position !== null
            ? `position ${event.position}, messageId derived from the key`
            : 'messageId set by the writer',
          event.keyHeader ? 'outbox row carries the key header' : null,
        ]
          .filter((part) => part !== null)
          .join('; ');
        const body = formatTrace(event.trace)
          .split('\n')
          .filter((line) => line !== '')
          .map((line) => `  ${line}`)
          .join('\n');
        return `event ${i + 1} (${how})\n${body}\n`;
      })
      .join('')
  );
}
