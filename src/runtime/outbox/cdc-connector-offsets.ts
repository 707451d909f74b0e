/**
 * Whether the CDC connector has a committed position, asked of Kafka Connect's REST API
 * (`GET /connectors/<name>/offsets`, Kafka Connect 3.6 and later), and the step that lets a new
 * MariaDB CDC outbox accept writes once it has.
 *
 * Why: MariaDB keeps no read position for a binlog reader; Debezium keeps it in Connect's offsets
 * topic, written every `offset.flush.interval.ms` (60 s by default). A connector that has not
 * committed one yet restarts after a worker crash with a new `snapshot.mode=no_data` snapshot at
 * the binlog's end, so everything written since its first start is skipped for good (measured:
 * test/cdc/cdc-first-commit-crash.test.ts). The migration that creates the CDC outbox therefore
 * refuses writes (cdc-server-readiness.ts) until `confirmCdcConnectorOffsets` has seen committed
 * offsets; from then on a crash resumes from the last commit and re-sends, and the inbox absorbs
 * the copies. evgen's connector config sends a Debezium heartbeat, so the first commit comes
 * without any event (one heartbeat interval plus one flush interval after the start).
 *
 * PostgreSQL needs none of this (its replication slot is the position, kept by the server), so
 * there the confirmation only checks the offsets and changes nothing.
 */
import type { Database } from '../db/database.js';
import { dialectOf } from '../db/sql-dialect.js';
import { CdcServerNotReadyError } from '../errors.js';
import { cdcOutboxTableOptions } from './cdc-outbox.js';
import { markAwaitingConnector, NO_CONFIRMED_OFFSETS } from './cdc-server-readiness.js';
import { outboxTableNames, type OutboxTableOptions } from './outbox-table.js';

export interface CdcConnectorOffsetsOptions extends OutboxTableOptions {
  /** Kafka Connect's REST URL, e.g. `http://connect:8083`. */
  readonly connectUrl: string;
  /** The connector's name (evgen's connector config: `evgen-outbox` unless named). */
  readonly connector: string;
  /** How long to wait for the first commit, in ms (default 0: ask once). */
  readonly waitMs?: number;
  /** Pause between two questions while waiting, in ms (default 1,000). */
  readonly pollMs?: number;
}

/**
 * The connector's committed source offsets as Connect reports them (empty: none committed yet).
 * Throws when Connect does not answer, does not know the connector, or is older than 3.6 (no
 * offsets endpoint): none of these proves a commit.
 */
export async function cdcConnectorOffsets(
  connectUrl: string,
  connector: string,
): Promise<readonly unknown[]> {
  const endpoint = `${connectUrl.replace(/\/+$/, '')}/connectors/${encodeURIComponent(connector)}/offsets`;
  const response = await fetch(endpoint, { headers: { accept: 'application/json' } });
  const text = await response.text();
  if (!response.ok) {
    throw new Error(
      `GET ${endpoint}: HTTP ${response.status} ${text.slice(0, 300)} (the connector's name as created, on Kafka Connect 3.6 or later)`,
    );
  }
  const body = JSON.parse(text) as { offsets?: unknown };
  if (!Array.isArray(body.offsets)) {
    throw new Error(`GET ${endpoint}: no "offsets" array in ${text.slice(0, 300)}`);
  }
  return body.offsets as unknown[];
}

/**
 * Waits (up to `waitMs`) until the connector has committed source offsets, then lets the CDC
 * outbox's writers accept writes (MySQL/MariaDB: removes the marker its creating migration left;
 * PostgreSQL: nothing to change). Throws CdcServerNotReadyError (setting `connector offsets`)
 * when none were committed in time, changing nothing. Idempotent.
 */
export async function confirmCdcConnectorOffsets(
  db: Database,
  options: CdcConnectorOffsetsOptions,
): Promise<void> {
  const deadline = Date.now() + (options.waitMs ?? 0);
  for (;;) {
    const offsets = await cdcConnectorOffsets(options.connectUrl, options.connector);
    if (offsets.length > 0) break;
    if (Date.now() >= deadline) {
      const problem = NO_CONFIRMED_OFFSETS();
      throw new CdcServerNotReadyError([
        {
          ...problem,
          value: `none committed by connector ${options.connector} yet`,
        },
      ]);
    }
    await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 1_000));
  }
  const dialect = dialectOf(db);
  if (dialect.name !== 'mysql') return;
  const names = outboxTableNames(cdcOutboxTableOptions(options), dialect);
  await markAwaitingConnector(db, names.versionTable, false);
}
