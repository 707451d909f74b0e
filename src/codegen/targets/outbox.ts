/**
 * Target `outbox`: per event, `<event dir>/outbox.ts` with one typed writer per version
 * (`writeOrderCreatedV2(tx, payload, context?, options?)`), thin wrappers over the runtime's
 * `writeOutboxEvent` bound to the descriptor from the sibling `envelope.ts` (only for events the
 * repository produces: none for the catalogs it depends on); plus
 * `outbox/migration.sql` (PostgreSQL) and `outbox/migration.mysql.sql` (MySQL 8.0.1+ / MariaDB
 * 10.6+), the outbox tables with default names, for migration tools, and beside them
 * `outbox/idempotency.sql` / `outbox/idempotency.mysql.sql`, the HTTP Idempotency-Key table.
 */
import type { EventDefinition } from '../../catalog/model.js';
import { isProduced } from '../../catalog/produced-events.js';
import { outboxMigrationSql } from '../../runtime/outbox/migration.js';
import { idempotencyMigrationSql } from '../../runtime/idempotency/idempotency-migration.js';
import { MYSQL_DIALECT } from '../../runtime/db/sql-dialect.js';
import { versionNames, versionTypeName } from '../../common/naming.js';
import { renderTemplate } from '../render/index.js';
import type { TargetFile, Target } from '../target.js';
import { eventFile } from './event-files.js';
import { compareStrings } from '../../common/json-value.js';

/** Name of the typed outbox writer of one event version: `writeOrderCreatedV2`. */
export function outboxWriterName(event: Pick<EventDefinition, 'name'>, version: number): string {
  return `write${versionTypeName(event, version)}`;
}

/** Path of the generated PostgreSQL migration, relative to the output folder. */
export const OUTBOX_MIGRATION_PATH = 'outbox/migration.sql';
/** Path of the generated MySQL/MariaDB migration, relative to the output folder. */
export const OUTBOX_MYSQL_MIGRATION_PATH = 'outbox/migration.mysql.sql';
/** Path of the HTTP idempotency table's PostgreSQL migration, relative to the output folder. */
export const IDEMPOTENCY_MIGRATION_PATH = 'outbox/idempotency.sql';
/** Path of the HTTP idempotency table's MySQL/MariaDB migration, relative to the output folder. */
export const IDEMPOTENCY_MYSQL_MIGRATION_PATH = 'outbox/idempotency.mysql.sql';

function migrationFiles(): TargetFile[] {
  return [
    {
      path: OUTBOX_MIGRATION_PATH,
      body: `-- Outbox tables with default names; idempotent (IF NOT EXISTS).\n\n${outboxMigrationSql()}`,
      sources: [],
    },
    {
      path: OUTBOX_MYSQL_MIGRATION_PATH,
      body: `-- Outbox tables with default names for MySQL >= 8.0.1 or MariaDB >= 10.6 (FOR UPDATE SKIP LOCKED); idempotent (IF NOT EXISTS).\n\n${outboxMigrationSql({}, MYSQL_DIALECT)}`,
      sources: [],
    },
    {
      path: IDEMPOTENCY_MIGRATION_PATH,
      body: `-- HTTP Idempotency-Key table with the default name (runIdempotent and its adapters); idempotent (IF NOT EXISTS).\n\n${idempotencyMigrationSql()}`,
      sources: [],
    },
    {
      path: IDEMPOTENCY_MYSQL_MIGRATION_PATH,
      body: `-- HTTP Idempotency-Key table with the default name for MySQL >= 8.0.1 or MariaDB >= 10.6; idempotent (IF NOT EXISTS).\n\n${idempotencyMigrationSql({}, MYSQL_DIALECT)}`,
      sources: [],
    },
  ];
}

export const outboxTarget: Target = {
  name: 'outbox',
  requires: ['envelopes', 'types'],
  scope: 'event',
  async generate({ catalog, runtimeImport }) {
    const files: TargetFile[] = [];
    // Writers only for the events this repository produces, never for a dependency's.
    for (const event of catalog.events.filter(isProduced)) {
      const body = renderTemplate('outbox', {
        runtimeImport,
        eventType: event.eventType,
        aggregateId: event.aggregateId,
        versions: event.versions.map((version) => {
          const names = versionNames(event, version.version);
          return {
            version: version.version,
            writerName: outboxWriterName(event, version.version),
            payloadType: names.payloadType,
            envelopeType: names.envelopeType,
            descriptorName: names.descriptorName,
          };
        }),
      });
      files.push({ ...eventFile(event, 'outbox.ts', body), laidOut: true });
    }
    files.push(...migrationFiles());
    return files.sort((a, b) => compareStrings(a.path, b.path));
  },
};
