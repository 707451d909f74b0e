/**
 * `evgen outbox status|cdc-confirm|dead|revive`: the outbox as an operator sees it, read from the
 * same table the services write and the relay publishes from.
 *   status   backlog by status, oldest READY age, DEAD rows per aggregate type, rows blocked
 *            behind a DEAD row, live leases (claims of running relays); `--fail-on-dead` exits 1
 *            when a DEAD row exists (for health checks). `--cdc`: the CDC outbox instead, whose
 *            backlog is the lag of Debezium's replication slot (MySQL/MariaDB: whether anything
 *            reads the binlog), first whether writes are accepted or which setting makes the
 *            writers refuse them, and with `--connect-url` the connector's state from the Kafka
 *            Connect REST API; `--fail-on-dead` then exits 1 when writes are refused, a slot is
 *            not active, nothing reads the binlog, or the connector or a task FAILED
 *   cdc-confirm  a new CDC outbox on MariaDB refuses writes until Kafka Connect reports the
 *            connector's committed source offsets: this asks, and lets writes through when so
 *   dead     the DEAD rows (the relay gave up on them), oldest first, each with how many later
 *            rows of its aggregate wait behind it; filters by aggregate / event type
 *   revive   DEAD rows back to READY with attempts reset (by outbox id, `--message-id`, or
 *            `--all` with optional filters); running relays are notified; the aggregate's order
 *            then resumes from the revived row
 * Exit 0 ok, 1 `--fail-on-dead` found DEAD rows, 2 bad input (no database URL, missing tables).
 */
import type { Command } from 'commander';
import type { CdcOutboxStatusReport } from '../../runtime/outbox/cdc-outbox-status.js';
import { formatCdcProblems } from '../cdc-problems.js';
import type { OutboxStatusReport } from '../../runtime/outbox/outbox-status.js';
import { refuse, reportingProblems } from '../command-support.js';
import { EXIT_FINDINGS, EXIT_OK } from '../exit-codes.js';
import {
  addDatabaseOptions,
  formatDuration,
  outboxTableOptions,
  printable,
  withDatabase,
  type DatabaseFlags,
} from '../operator-options.js';
import { printableJson } from '../../diagnostics/printable.js';

export interface OutboxStatusOptions extends DatabaseFlags {
  readonly json?: boolean;
  readonly failOnDead?: boolean;
  readonly cdc?: boolean;
  readonly slot?: string;
  readonly connectUrl?: string;
  readonly connector?: string;
}

export interface OutboxCdcConfirmOptions extends DatabaseFlags {
  readonly connectUrl?: string;
  readonly connector?: string;
  readonly wait?: string;
}

export interface OutboxDeadOptions extends DatabaseFlags {
  readonly json?: boolean;
  readonly aggregateType?: string;
  readonly aggregateId?: string;
  readonly eventType?: string;
  readonly limit?: string;
}

export interface OutboxReviveOptions extends DatabaseFlags {
  readonly json?: boolean;
  readonly all?: boolean;
  readonly messageId?: string[];
  readonly aggregateType?: string;
  readonly aggregateId?: string;
  readonly eventType?: string;
  readonly notifyChannel?: string;
}

function addDeadFilters(command: Command): Command {
  return command
    .option('--aggregate-type <type>', 'only rows of this aggregate type')
    .option('--aggregate-id <id>', 'only rows of this aggregate')
    .option('--event-type <type>', 'only rows of this event type');
}

export function registerOutbox(program: Command): void {
  const outbox = program
    .command('outbox')
    .description('inspect the transactional outbox: status, DEAD rows, revive');
  addDatabaseOptions(
    outbox
      .command('status')
      .description('backlog by status, oldest READY age, DEAD rows by aggregate type, relay leases')
      .option('--json', 'print the status as JSON')
      .option(
        '--fail-on-dead',
        'exit 1 when any row is DEAD (--cdc: writes refused, a slot inactive, no binlog reader, a task FAILED)',
      )
      .option('--cdc', 'the CDC outbox (default table outbox_cdc_event) streamed by Debezium')
      .option('--slot <name>', "--cdc: only this replication slot (the connector's slot.name)")
      .option('--connect-url <url>', '--cdc: Kafka Connect REST URL, e.g. http://connect:8083')
      .option('--connector <name>', '--cdc: connector name (default evgen-outbox)'),
  ).action(async (options: OutboxStatusOptions) => {
    process.exitCode = await runOutboxStatus(options);
  });
  addDatabaseOptions(
    outbox
      .command('cdc-confirm')
      .description(
        "let a new CDC outbox accept writes once Kafka Connect reports the connector's committed source offsets (MariaDB keeps no position of its own)",
      )
      .option('--connect-url <url>', 'Kafka Connect REST URL, e.g. http://connect:8083')
      .option('--connector <name>', 'connector name (default evgen-outbox)')
      .option(
        '--wait <seconds>',
        'wait up to this long for the first commit (default 0: ask once)',
      ),
  ).action(async (options: OutboxCdcConfirmOptions) => {
    process.exitCode = await runOutboxCdcConfirm(options);
  });
  addDatabaseOptions(
    addDeadFilters(
      outbox
        .command('dead')
        .description(
          'list DEAD rows, oldest first, with the rows of their aggregate waiting behind',
        )
        .option('--limit <n>', 'at most this many rows (default 100)')
        .option('--json', 'print JSON'),
    ),
  ).action(async (options: OutboxDeadOptions) => {
    process.exitCode = await runOutboxDead(options);
  });
  addDatabaseOptions(
    addDeadFilters(
      outbox
        .command('revive')
        .description(
          'put DEAD rows back to READY (attempts reset) so the relay publishes them again',
        )
        .argument('[ids...]', 'outbox row ids (the `id` column, as `evgen outbox dead` shows)')
        .option('--message-id <id...>', 'revive the rows of these messageIds')
        .option('--all', 'revive every DEAD row (narrowed by the filters)')
        .option('--notify-channel <name>', 'channel the relays LISTEN on (default evgen_outbox)')
        .option('--json', 'print JSON'),
    ),
  ).action(async (ids: string[], options: OutboxReviveOptions) => {
    process.exitCode = await runOutboxRevive(ids, options);
  });
}

function filterOf(options: OutboxDeadOptions | OutboxReviveOptions) {
  return {
    ...(options.aggregateType !== undefined ? { aggregateType: options.aggregateType } : {}),
    ...(options.aggregateId !== undefined ? { aggregateId: options.aggregateId } : {}),
    ...(options.eventType !== undefined ? { eventType: options.eventType } : {}),
  };
}

export function runOutboxDead(options: OutboxDeadOptions): Promise<number> {
  return reportingProblems(async () => {
    const limit = options.limit === undefined ? 100 : Number(options.limit);
    if (!Number.isSafeInteger(limit) || limit < 1) {
      throw refuse({
        code: 'bad-limit',
        file: '--limit',
        message: `--limit ${printable(String(options.limit))} is not a positive integer`,
        hint: 'give a whole number of rows, e.g. --limit 50',
      });
    }
    const rows = await withDatabase(options, async (db) => {
      const { listDeadOutboxEvents } = await import('../../runtime/outbox/dead-events.js');
      return listDeadOutboxEvents(db, {
        ...outboxTableOptions(options),
        ...filterOf(options),
        limit,
      });
    });
    if (options.json === true) {
      process.stdout.write(`${printableJson(rows)}\n`);
      return EXIT_OK;
    }
    const lines = [
      `${rows.length} DEAD row(s)${rows.length === limit ? ` (first ${limit}; use --limit)` : ''}`,
    ];
    for (const row of rows) {
      lines.push(
        `  id ${row.id}  ${row.messageId}  ${row.eventType} v${row.schemaVersion}  ${row.aggregateType} ${row.aggregateId}`,
        `    attempts ${row.attempts}, written ${row.createdAt}, ${row.blocked} later row(s) waiting; last error: ${row.lastError ?? '-'}`,
      );
    }
    process.stdout.write(`${lines.map(printable).join('\n')}\n`);
    return EXIT_OK;
  });
}

export function runOutboxRevive(
  ids: readonly string[],
  options: OutboxReviveOptions,
): Promise<number> {
  return reportingProblems(async () => {
    const messageIds = options.messageId ?? [];
    const chosen = [ids.length > 0, messageIds.length > 0, options.all === true].filter(
      Boolean,
    ).length;
    if (chosen !== 1) {
      throw refuse({
        code: 'revive-needs-selection',
        file: 'evgen outbox revive',
        message:
          chosen === 0
            ? 'nothing selected: give outbox ids, --message-id, or --all'
            : 'give only one of: outbox ids, --message-id, --all',
        hint: 'list the DEAD rows first with evgen outbox dead',
      });
    }
    const bad = [
      ...ids.filter((id) => !isOutboxId(id)).map((id) => `outbox id ${id}`),
      ...messageIds
        .filter((id) => !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id))
        .map((id) => `messageId ${id}`),
    ];
    if (bad.length > 0) {
      throw refuse({
        code: 'bad-id',
        file: 'evgen outbox revive',
        message: `not an id: ${printable(bad.join(', '))}`,
        hint: 'outbox ids are the numbers evgen outbox dead shows; messageIds are UUIDs',
      });
    }
    const target =
      ids.length > 0
        ? { ids }
        : messageIds.length > 0
          ? { messageIds }
          : { all: true as const, ...filterOf(options) };
    const revived = await withDatabase(options, async (db) => {
      const { reviveDeadOutboxEvents } = await import('../../runtime/outbox/dead-events.js');
      return reviveDeadOutboxEvents(db, target, {
        ...outboxTableOptions(options),
        ...(options.notifyChannel !== undefined ? { notifyChannel: options.notifyChannel } : {}),
      });
    });
    if (options.json === true) {
      process.stdout.write(`${printableJson(revived)}\n`);
      return EXIT_OK;
    }
    const lines = [`revived ${revived.length} row(s)`];
    for (const row of revived)
      lines.push(`  id ${row.id}  ${row.messageId}  ${row.aggregateType} ${row.aggregateId}`);
    process.stdout.write(`${lines.map(printable).join('\n')}\n`);
    return EXIT_OK;
  });
}

/** The connector's state as GET /connectors/<name>/status reports it. */
interface ConnectorState {
  readonly name: string;
  readonly state: string;
  readonly tasks: readonly {
    readonly id: number;
    readonly state: string;
    readonly trace?: string;
  }[];
  /**
   * Whether the connector has committed a source position (GET /connectors/<name>/offsets);
   * null when the worker does not say (Kafka Connect before 3.6). Until it has, a worker crash
   * restarts a MariaDB connector at the binlog's end, skipping what was written since it started.
   */
  readonly offsetsCommitted: boolean | null;
}

async function connectorState(url: string, name: string): Promise<ConnectorState> {
  const endpoint = `${url.replace(/\/+$/, '')}/connectors/${encodeURIComponent(name)}/status`;
  let response: Response;
  try {
    response = await fetch(endpoint, { headers: { accept: 'application/json' } });
  } catch (error) {
    throw refuse({
      code: 'connect-unreachable',
      file: '--connect-url',
      message: `Kafka Connect does not answer at ${printable(endpoint)}: ${(error as Error).message}`,
      hint: 'give the REST URL of a Connect worker, e.g. --connect-url http://connect:8083',
    });
  }
  if (!response.ok) {
    throw refuse({
      code: 'connector-unknown',
      file: '--connector',
      message: `GET ${printable(endpoint)}: HTTP ${response.status} ${printable(await response.text())}`,
      hint: 'name the connector as it was created (PUT /connectors/<name>/config)',
    });
  }
  const body = (await response.json()) as {
    connector: { state: string };
    tasks: { id: number; state: string; trace?: string }[];
  };
  return {
    name,
    state: body.connector.state,
    tasks: body.tasks,
    offsetsCommitted: await offsetsCommitted(endpoint.replace(/\/status$/, '/offsets')),
  };
}

async function offsetsCommitted(endpoint: string): Promise<boolean | null> {
  try {
    const response = await fetch(endpoint, { headers: { accept: 'application/json' } });
    if (!response.ok) return null;
    const body = (await response.json()) as { offsets?: unknown[] };
    return Array.isArray(body.offsets) ? body.offsets.length > 0 : null;
  } catch {
    return null;
  }
}

function runCdcOutboxStatus(options: OutboxStatusOptions): Promise<number> {
  return reportingProblems(async () => {
    const status = await withDatabase(options, async (db) => {
      const { cdcOutboxStatus } = await import('../../runtime/outbox/cdc-outbox-status.js');
      return cdcOutboxStatus(db, {
        ...outboxTableOptions(options),
        ...(options.slot !== undefined ? { slot: options.slot } : {}),
      });
    });
    const connector =
      options.connectUrl === undefined
        ? null
        : await connectorState(options.connectUrl, options.connector ?? 'evgen-outbox');
    process.stdout.write(
      options.json === true
        ? `${printableJson({ ...status, connector })}\n`
        : formatCdcStatus(status, connector),
    );
    const stalled =
      status.problems.length > 0 ||
      status.slots.some((slot) => !slot.active || slot.walStatus === 'lost') ||
      status.binlog?.readers === 0 ||
      (connector !== null &&
        ([connector.state, ...connector.tasks.map((t) => t.state)].includes('FAILED') ||
          !connector.tasks.some((task) => task.state === 'RUNNING')));
    return options.failOnDead === true && stalled ? EXIT_FINDINGS : EXIT_OK;
  });
}

/**
 * `outbox cdc-confirm`: asks Connect for the connector's committed offsets (waiting up to
 * `--wait`) and lifts the new CDC outbox's write refusal when there are some. Exit 0 accepted,
 * 1 none committed yet (nothing changed), 2 bad input or Connect not answering.
 */
export function runOutboxCdcConfirm(options: OutboxCdcConfirmOptions): Promise<number> {
  return reportingProblems(async () => {
    if (options.connectUrl === undefined) {
      throw refuse({
        code: 'connect-url-missing',
        file: '--connect-url',
        message: "cdc-confirm reads the connector's committed offsets from Kafka Connect",
        hint: 'give the REST URL of a Connect worker, e.g. --connect-url http://connect:8083',
      });
    }
    const wait = options.wait === undefined ? 0 : Number(options.wait);
    if (!Number.isFinite(wait) || wait < 0) {
      throw refuse({
        code: 'bad-wait',
        file: '--wait',
        message: `--wait ${printable(options.wait ?? '')} is not a number of seconds`,
        hint: 'give seconds, e.g. --wait 90 (one offset.flush.interval.ms and a heartbeat)',
      });
    }
    const connectUrl = options.connectUrl;
    const connector = options.connector ?? 'evgen-outbox';
    const { confirmCdcConnectorOffsets } =
      await import('../../runtime/outbox/cdc-connector-offsets.js');
    const { CdcServerNotReadyError } = await import('../../runtime/errors.js');
    return withDatabase(options, async (db) => {
      try {
        await confirmCdcConnectorOffsets(db, {
          ...outboxTableOptions(options),
          connectUrl,
          connector,
          waitMs: wait * 1000,
        });
      } catch (error) {
        if (error instanceof CdcServerNotReadyError) {
          process.stdout.write(`${formatCdcProblems(error.problems).map(printable).join('\n')}\n`);
          return EXIT_FINDINGS;
        }
        if (error instanceof Error && error.message.startsWith('GET ')) {
          throw refuse({
            code: 'connector-offsets-unknown',
            file: '--connector',
            message: printable(error.message),
            hint: 'name the connector as it was created, on Kafka Connect 3.6 or later',
          });
        }
        throw refuse({
          code: 'connect-unreachable',
          file: '--connect-url',
          message: `Kafka Connect does not answer at ${printable(connectUrl)}: ${printable((error as Error).message)}`,
          hint: 'give the REST URL of a Connect worker, e.g. --connect-url http://connect:8083',
        });
      }
      process.stdout.write(
        `connector ${printable(connector)} has committed source offsets: CDC writes accepted (a worker crash now resumes from its last commit)\n`,
      );
      return EXIT_OK;
    });
  });
}

function formatBytes(bytes: number | null): string {
  if (bytes === null) return '-';
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} kB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * A listed binlog reader is not proof that a connector reads: the server notices a replica that
 * died without closing its connection only when it next writes to it.
 */
function staleReaderNote(connector: ConnectorState | null): string {
  if (connector === null) {
    return "a reader that died without closing (a Connect worker SIGKILLed) stays listed until the server next writes to it: --connect-url checks that the connector's task runs";
  }
  if (!connector.tasks.some((task) => task.state === 'RUNNING')) {
    return `no task of connector ${connector.name} is RUNNING: these connections are left from a stopped or killed worker, and the server drops each when it next writes to it`;
  }
  return `connector ${connector.name} has a RUNNING task`;
}

function formatCdcStatus(status: CdcOutboxStatusReport, connector: ConnectorState | null): string {
  const lines = [
    ...formatCdcProblems(status.problems),
    `CDC outbox rows: ${status.rows} (evgen's writer deletes each row in the transaction that writes it)`,
  ];
  if (status.binlog !== undefined) {
    const { readers, readerConnections, file, position } = status.binlog;
    lines.push(
      `binlog: ${readers === 0 ? 'NO reader (no connector streaming it)' : `${readers} reader${readers === 1 ? '' : 's'} (replica connections)`}${file !== null ? `, written up to ${file}:${position ?? '?'}` : ''}`,
    );
    for (const reader of readerConnections) {
      lines.push(
        `  reader ${reader.id} from ${reader.host || 'an address the server does not list'} (user ${reader.user}), ${reader.stateSeconds} s in state: ${reader.state}`,
      );
    }
    if (readers > 0) lines.push(`  ${staleReaderNote(connector)}`);
  } else if (status.slots.length === 0) {
    lines.push('replication slots: none (no connector has started on this database)');
  }
  for (const slot of status.slots) {
    lines.push(
      `slot ${slot.slotName}: ${slot.active ? 'active' : 'INACTIVE (no connector reading)'}, lag ${formatBytes(slot.lagBytes)}, WAL kept ${formatBytes(slot.retainedBytes)}${slot.walStatus !== null ? `, wal_status ${slot.walStatus}` : ''}`,
    );
  }
  if (connector === null) {
    lines.push('connector: not looked at (give --connect-url and --connector)');
  } else {
    lines.push(`connector ${connector.name}: ${connector.state}`);
    if (connector.offsetsCommitted === false) {
      lines.push(
        '  no source offsets committed yet: a worker crash now restarts it with no position (MariaDB: at the binlog end, skipping what was written since it started)',
      );
    } else if (connector.offsetsCommitted === true) {
      lines.push('  source offsets committed (a restart resumes from them)');
    }
    for (const task of connector.tasks) {
      lines.push(`  task ${task.id}: ${task.state}`);
      if (task.trace !== undefined) lines.push(`    ${task.trace.split('\n')[0] ?? ''}`);
    }
  }
  return `${lines.map(printable).join('\n')}\n`;
}

export function runOutboxStatus(options: OutboxStatusOptions): Promise<number> {
  if (options.cdc === true) return runCdcOutboxStatus(options);
  return reportingProblems(async () => {
    const status = await withDatabase(options, async (db) => {
      const { outboxStatus } = await import('../../runtime/outbox/outbox-status.js');
      return outboxStatus(db, outboxTableOptions(options));
    });
    process.stdout.write(
      options.json === true ? `${printableJson(status)}\n` : formatStatus(status),
    );
    return options.failOnDead === true && status.dead > 0 ? EXIT_FINDINGS : EXIT_OK;
  });
}

function formatStatus(status: OutboxStatusReport): string {
  const age = (ms: number | null) => (ms === null ? '-' : formatDuration(ms));
  const lines = [
    `READY       ${status.ready} (due now ${status.due}, oldest ${age(status.oldestReadyAgeMs)})`,
    `PROCESSING  ${status.processing}`,
    `SENT        ${status.sent}`,
    `DEAD        ${status.dead}`,
    `oldest unsent: ${age(status.oldestUnsentAgeMs)}`,
  ];
  if (status.blockedByDead > 0) {
    lines.push(
      `blocked behind a DEAD row of their aggregate: ${status.blockedByDead} (revive with: evgen outbox revive)`,
    );
  }
  if (status.deadByAggregateType.length > 0) {
    lines.push('DEAD by aggregate type:');
    for (const row of status.deadByAggregateType) {
      lines.push(
        `  ${row.aggregateType}: ${row.dead} row(s) in ${row.aggregates} aggregate(s), oldest written ${row.oldestCreatedAt}`,
      );
    }
  }
  lines.push(`live leases: ${status.leases.length}`);
  for (const lease of status.leases) {
    lines.push(`  ${lease.leaseToken}: ${lease.rows} row(s) until ${lease.lockedUntil}`);
  }
  return `${lines.join('\n')}\n`;
}

/** An outbox id: a positive bigint of PostgreSQL and MySQL (at most 2^63 - 1). */
function isOutboxId(id: string): boolean {
  return /^[0-9]{1,19}$/.test(id) && BigInt(id) >= 1n && BigInt(id) <= 9223372036854775807n;
}
