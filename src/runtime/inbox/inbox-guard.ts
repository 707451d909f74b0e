/**
 * The inbox guard: the inbox row and the handler's writes commit in ONE
 * transaction, so a message is either handled exactly once per consumer or not at all.
 */
import type { Database, Transaction } from '../db/database.js';
import type { Envelope } from '../envelope.js';
import { InboxHandlerError } from './inbox-handler-error.js';
import { inboxTableName, type InboxTableOptions } from './inbox-tables.js';

/** `handled`: this call ran the handler and committed; `duplicate`: the consumer had already handled it. */
export type InboxOutcome = 'handled' | 'duplicate';

export interface InboxGuardOptions<E extends Envelope = Envelope> extends InboxTableOptions {
  /** The consumer's stable name; part of the inbox key, so two consumers each handle a message once. */
  readonly consumer: string;
  readonly envelope: E;
}

/** Business code run inside the guard; `tx` is the only handle it may write through. */
export type InboxHandler<E extends Envelope = Envelope> = (
  tx: Transaction,
  envelope: E,
) => Promise<void>;

/**
 * Runs `handler` at most once per (messageId, consumer). In one transaction: insert the inbox
 * row with ON CONFLICT DO NOTHING (the primary key is the arbiter, never a prior SELECT); no
 * row inserted → duplicate, commit without running the handler; otherwise run the handler on
 * the same transaction, stamp processed_at and commit. A concurrent delivery of the same message
 * waits on the uncommitted row and then sees a duplicate. Any failure rolls everything back,
 * inbox row included, and is rethrown as an InboxHandlerError carrying `retryable`.
 * Acknowledge the broker message only after this resolves.
 */
export async function handleWithInbox<E extends Envelope>(
  db: Database,
  options: InboxGuardOptions<E>,
  handler: InboxHandler<E>,
): Promise<InboxOutcome> {
  const table = inboxTableName(options);
  const { consumer, envelope } = options;
  try {
    return await db.transaction(async (tx) => {
      const claimed = await claimInboxRow(tx, table, envelope.messageId, consumer);
      if (!claimed) return 'duplicate';
      await handler(tx, envelope);
      await markProcessed(tx, table, envelope.messageId, consumer);
      return 'handled';
    });
  } catch (error) {
    throw error instanceof InboxHandlerError
      ? error
      : new InboxHandlerError(consumer, envelope.messageId, error);
  }
}

/** Inserts the inbox row; false when it already existed (a duplicate). */
export async function claimInboxRow(
  tx: Transaction,
  table: string,
  messageId: string,
  consumer: string,
): Promise<boolean> {
  const inserted = await tx.query(
    `INSERT INTO ${table} (message_id, consumer) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING 1 AS claimed`,
    [messageId, consumer],
  );
  return inserted.rows.length === 1;
}

export async function markProcessed(
  tx: Transaction,
  table: string,
  messageId: string,
  consumer: string,
): Promise<void> {
  await tx.query(
    `UPDATE ${table} SET processed_at = now() WHERE message_id = $1 AND consumer = $2`,
    [messageId, consumer],
  );
}
