/**
 * `evgen outbox status|dead|revive`: the outbox as an operator sees it, read from the same table
 * the services write and the relay publishes from.
 *   status   backlog by status, oldest READY age, DEAD rows per aggregate type, rows blocked
 *            behind a DEAD row, live leases (claims of running relays); `--fail-on-dead` exits 1
 *            when a DEAD row exists (for health checks)
 * Exit 0 ok, 1 `--fail-on-dead` found DEAD rows, 2 bad input (no database URL, missing tables).
 */
import type { Command } from 'commander';
import type { OutboxStatusReport } from '../../runtime/outbox/outbox-status.js';
import { reportingProblems } from '../command-support.js';
import { EXIT_FINDINGS, EXIT_OK } from '../exit-codes.js';
import {
  addDatabaseOptions,
  formatDuration,
  outboxTableOptions,
  withDatabase,
  type DatabaseFlags,
} from '../operator-options.js';

export interface OutboxStatusOptions extends DatabaseFlags {
  readonly json?: boolean;
  readonly failOnDead?: boolean;
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
      .option('--fail-on-dead', 'exit 1 when any row is DEAD'),
  ).action(async (options: OutboxStatusOptions) => {
    process.exitCode = await runOutboxStatus(options);
  });
}

export function runOutboxStatus(options: OutboxStatusOptions): Promise<number> {
  return reportingProblems(async () => {
    const status = await withDatabase(options, async (db) => {
      const { outboxStatus } = await import('../../runtime/outbox/outbox-status.js');
      return outboxStatus(db, outboxTableOptions(options));
    });
    process.stdout.write(
      options.json === true ? `${JSON.stringify(status, null, 2)}\n` : formatStatus(status),
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
