/**
 * Picks the relay's statements for the database's dialect: PostgreSQL runs each as one statement
 * (claim-query-postgres); MySQL/MariaDB has no UPDATE … RETURNING, so its claim is a short
 * transaction of a few statements (claim-query-mysql). The interface is claim-query's.
 */
import type { SqlDialect } from '../db/sql-dialect.js';
import type { RelayStatements } from './claim-query.js';
import { mysqlRelayStatements } from './claim-query-mysql.js';
import {
  postgresRelayStatements,
  type PostgresRelayStatementOptions,
} from './claim-query-postgres.js';
import type { OutboxTableNames } from './outbox-table.js';

export function relayStatements(
  names: OutboxTableNames,
  dialect: SqlDialect,
  postgres: PostgresRelayStatementOptions = {},
): RelayStatements {
  return dialect.name === 'mysql'
    ? mysqlRelayStatements(names)
    : postgresRelayStatements(names, postgres);
}
