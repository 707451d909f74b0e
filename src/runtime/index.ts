// The runtime that generated code imports (`evgen-runtime`, packed from this folder; also
// `evgen/runtime` inside the generator package). It never imports generator code.
export * from './errors.js';
export * from './envelope.js';
export * from './publisher.js';
export * from './backoff.js';
export * from './db/database.js';
export * from './db/open-database.js';
export * from './db/sql-identifier.js';
export * from './db/sql-dialect.js';
export * from './db/mysql-database.js';
export * from './db/mysql-server-version.js';
export * from './inbox/index.js';
export * from './payload-validator.js';
export * from './parse-envelope.js';
export * from './decode-message-body.js';
export * from './outbox/index.js';
export * from './delivery/index.js';
export * from './rabbitmq/index.js';
export * from './in-process/index.js';
export * from './kafka/index.js';
export * from './metrics.js';
