/**
 * Where the outbox lives. Schema and table names are the only configurable SQL text; they pass
 * through `quoteIdentifier`, so a bad name throws before any SQL is built.
 */
import { POSTGRES_DIALECT, type SqlDialect } from '../db/sql-dialect.js';

/** Statuses of an outbox row: READY → PROCESSING (leased) → SENT | READY (backing off) | DEAD. */
export const OUTBOX_STATUSES = ['READY', 'PROCESSING', 'SENT', 'DEAD'] as const;
export type OutboxStatus = (typeof OUTBOX_STATUSES)[number];

/** Default table name. */
export const DEFAULT_OUTBOX_TABLE = 'outbox_event';

/** Channel the writer NOTIFYs and the relay LISTENs on unless configured otherwise. */
export const DEFAULT_OUTBOX_NOTIFY_CHANNEL = 'evgen_outbox';

export interface OutboxTableOptions {
  /** Schema of the outbox tables; defaults to the connection's search_path. */
  readonly schema?: string;
  /** Outbox table name; defaults to `outbox_event`. */
  readonly table?: string;
}

/** Quoted, validated names of everything the outbox owns. */
export interface OutboxTableNames {
  /** `"schema"."outbox_event"` */
  readonly table: string;
  /** Per-aggregate version counter used by `assignAggregateVersion`: `<table>_aggregate_version`. */
  readonly versionTable: string;
  /** Quoted names of the table's indexes (unqualified: an index lives in its table's schema). */
  readonly claimIndex: string;
  /** The claim index of an earlier schema version (same rows, predicate spelled `status IN`), dropped by the migration. */
  readonly legacyClaimIndex: string;
  readonly aggregateIndex: string;
  /** The per-aggregate index of an earlier schema version (unsent rows only), dropped by the migration. */
  readonly legacyAggregateIndex: string;
  readonly sentIndex: string;
  /** Finds one claim's rows by its lease token (SENT marks, lease renewals, releases). */
  readonly leaseIndex: string;
  /** Quoted schema name, when one was given. */
  readonly schema?: string;
  /** Stable text identifying this outbox, for advisory-lock keys. */
  readonly key: string;
}

/** The names quoted for `dialect` (PostgreSQL unless given). */
export function outboxTableNames(
  options: OutboxTableOptions = {},
  dialect: SqlDialect = POSTGRES_DIALECT,
): OutboxTableNames {
  const table = options.table ?? DEFAULT_OUTBOX_TABLE;
  const schema = options.schema;
  const { qualifiedName, quoteIdentifier } = dialect;
  return {
    table: qualifiedName(schema, table),
    versionTable: qualifiedName(schema, `${table}_aggregate_version`),
    claimIndex: quoteIdentifier(`${table}_claimable_idx`),
    legacyClaimIndex: quoteIdentifier(`${table}_claim_idx`),
    aggregateIndex: quoteIdentifier(`${table}_aggregate_open_idx`),
    legacyAggregateIndex: quoteIdentifier(`${table}_aggregate_idx`),
    sentIndex: quoteIdentifier(`${table}_sent_idx`),
    leaseIndex: quoteIdentifier(`${table}_lease_idx`),
    ...(schema !== undefined ? { schema: quoteIdentifier(schema) } : {}),
    key: `${schema ?? ''}.${table}`,
  };
}
