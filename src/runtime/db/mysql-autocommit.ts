/**
 * Statements evgen runs outside a transaction (a relay's SENT marks and releases, an
 * Idempotency-Key's claim) must commit on their own. On a MySQL/MariaDB server whose default is
 * `autocommit = 0` (set in my.cnf or by `init_connect`, as some servers are) each of them would
 * instead open a transaction that nobody commits: its writes are lost when the connection closes,
 * its locks held until then, a later read on that connection sees an old snapshot, and the next
 * `SET TRANSACTION` on it fails. So a Database asks the server once whether its sessions
 * autocommit and, where they do not, runs each such statement in a transaction of its own.
 */
import type { QueryResult, Transaction } from './database.js';

/** Runs one statement outside a transaction, committed whatever the server's autocommit default. */
export type AutocommittedQuery = <R>(
  text: string,
  params: readonly unknown[] | undefined,
) => Promise<QueryResult<R>>;

/**
 * `direct` runs a statement as it is; `inTransaction` in a transaction of its own. The server is
 * asked once (again after a failure) whether a session commits each statement, in a transaction
 * of its own too, so the question leaves nothing open on the connection it ran on.
 */
export function autocommittedQuery(
  direct: AutocommittedQuery,
  inTransaction: <T>(work: (tx: Transaction) => Promise<T>) => Promise<T>,
): AutocommittedQuery {
  let answer: Promise<boolean> | undefined;
  const autocommits = () =>
    inTransaction(async (tx) => {
      const { rows } = await tx.query<{ enabled: unknown }>(
        'SELECT @@SESSION.autocommit AS enabled',
      );
      return Number(rows[0]?.enabled) === 1;
    });
  return async <R>(text: string, params: readonly unknown[] | undefined) => {
    answer ??= autocommits().catch((error: unknown) => {
      answer = undefined;
      throw error;
    });
    if (await answer) return direct<R>(text, params);
    return inTransaction((tx) => tx.query<R>(text, params));
  };
}
