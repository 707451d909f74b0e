/** Where the consumer-side fault-injection child kills itself, and the business effect it performs. */
import type { Transaction } from '../../../src/runtime/index.js';

export const KILL_POINTS = [
  'before-transaction',
  'after-inbox-insert',
  'after-business-write',
  'after-commit-before-ack',
] as const;
export type KillPoint = (typeof KILL_POINTS)[number];

/** The business effect both the child and the test's redelivery perform. */
export async function recordParcel(
  tx: Transaction,
  messageId: string,
  schema: string,
): Promise<void> {
  await tx.query(
    tx.dialect?.name === 'mysql'
      ? `INSERT INTO \`${schema}\`.effects (message_id, consumer) VALUES (?, 'tracker')`
      : `INSERT INTO "${schema}".effects (message_id, consumer) VALUES ($1, 'tracker')`,
    [messageId],
  );
}
