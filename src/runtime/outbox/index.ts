// The transactional outbox: schema, writer, relay, retention and stats.
export * from './outbox-table.js';
export * from './migration.js';
export * from './write-outbox-event.js';
export {
  DEFAULT_CDC_OUTBOX_TABLE,
  cdcOutboxMigrationSql,
  cdcOutboxMigrationStatements,
  migrateCdcOutbox,
} from './cdc-outbox.js';
export * from './relay.js';
export * from './relay-errors.js';
export * from './prune-outbox.js';
export * from './outbox-stats.js';
export * from './outbox-status.js';
export * from './find-outbox-event.js';
export * from './recording-publisher.js';
export * from './dead-events.js';
