/**
 * Batched inbox handling (e.g. one Kafka poll): several messages in ONE transaction, each inside
 * its own savepoint, so one failing message rolls back only its own inbox row and writes while
 * the others commit together. One commit per batch instead of one per message.
 */
import type { Database } from '../db/database.js';
import type { Envelope } from '../envelope.js';
import {
  claimInboxRow,
  markProcessed,
  type InboxHandler,
  type InboxOutcome,
} from './inbox-guard.js';
import { InboxHandlerError } from './inbox-handler-error.js';
import { inboxTableName, type InboxTableOptions } from './inbox-tables.js';

/** The outcome of one message of a batch, in input order. */
type InboxBatchResult =
  | { readonly messageId: string; readonly outcome: InboxOutcome }
  | { readonly messageId: string; readonly outcome: 'failed'; readonly error: InboxHandlerError };

interface InboxBatchOptions<E extends Envelope = Envelope> extends InboxTableOptions {
  readonly consumer: string;
  readonly envelopes: readonly E[];
}

const SAVEPOINT = 'evgen_inbox_message';

/**
 * Runs `handler` for every envelope as `handleWithInbox` would, but in one transaction with a
 * savepoint per message. Resolves after the commit with one result per envelope: `handled`,
 * `duplicate` (also for a repeat inside the same batch) or `failed` with the classified error
 * (that message's inbox row and writes were rolled back; route it like a single failure).
 * Acknowledge/commit offsets for the batch only after this resolves. If the commit itself
 * fails, it rejects with an InboxHandlerError for the first message and nothing is committed.
 */
export async function handleBatchWithInbox<E extends Envelope>(
  db: Database,
  options: InboxBatchOptions<E>,
  handler: InboxHandler<E>,
): Promise<InboxBatchResult[]> {
  const table = inboxTableName(options, db.dialect);
  const { consumer, envelopes } = options;
  if (envelopes.length === 0) return [];
  try {
    return await db.transaction(async (tx) => {
      const results: InboxBatchResult[] = [];
      for (const envelope of envelopes) {
        await tx.query(`SAVEPOINT ${SAVEPOINT}`);
        try {
          if (!(await claimInboxRow(tx, table, envelope.messageId, consumer))) {
            results.push({ messageId: envelope.messageId, outcome: 'duplicate' });
          } else {
            await handler(tx, envelope);
            await markProcessed(tx, table, envelope.messageId, consumer);
            results.push({ messageId: envelope.messageId, outcome: 'handled' });
          }
          await tx.query(`RELEASE SAVEPOINT ${SAVEPOINT}`);
        } catch (error) {
          // A failure inside the savepoint undoes only this message; an error here (connection lost) aborts the batch.
          await tx.query(`ROLLBACK TO SAVEPOINT ${SAVEPOINT}`);
          await tx.query(`RELEASE SAVEPOINT ${SAVEPOINT}`);
          results.push({
            messageId: envelope.messageId,
            outcome: 'failed',
            error: new InboxHandlerError(consumer, envelope.messageId, error),
          });
        }
      }
      return results;
    });
  } catch (error) {
    throw error instanceof InboxHandlerError
      ? error
      : new InboxHandlerError(consumer, envelopes[0]!.messageId, error);
  }
}
