/**
 * Whether a dead letter still needs someone: a letter is resolved once its consumer committed
 * the same messageId in its inbox (a replay, or a later copy, was handled), because the inbox
 * row exists only after a handling transaction committed. A Kafka letter stays in its log after
 * a replay, so without this `dlq list` could not tell the open letters from the settled ones.
 */
import type { Database } from '../runtime/db/database.js';
import type { InboxEntry } from '../runtime/inbox/find-inbox-entries.js';
import type { InboxTableOptions } from '../runtime/inbox/inbox-tables.js';
import type { DeadLetterRecord } from '../runtime/delivery/dead-letter-source.js';

/** A dead letter with its resolution: `resolvedAt` is when its consumer committed the message. */
export type ResolvedDeadLetter = DeadLetterRecord & {
  readonly resolved: boolean;
  readonly resolvedAt?: string;
};

/** The letter's resolution from the inbox rows of its messageId (any consumers'). */
export function resolution(
  letter: DeadLetterRecord,
  entries: readonly InboxEntry[],
): ResolvedDeadLetter {
  const entry = entries.find((e) => e.consumer === letter.consumer);
  if (entry === undefined) return { ...letter, resolved: false };
  return { ...letter, resolved: true, resolvedAt: entry.processedAt ?? entry.receivedAt };
}

/** Looks every letter's messageId up in the inbox (once per messageId). */
export async function resolveDeadLetters(
  db: Database,
  letters: readonly DeadLetterRecord[],
  options: InboxTableOptions,
): Promise<ResolvedDeadLetter[]> {
  const { findInboxEntries } = await import('../runtime/inbox/find-inbox-entries.js');
  const byId = new Map<string, InboxEntry[]>();
  for (const id of new Set(letters.map((l) => l.messageId))) {
    if (id !== undefined) byId.set(id, await findInboxEntries(db, id, options));
  }
  return letters.map((letter) =>
    resolution(letter, letter.messageId === undefined ? [] : (byId.get(letter.messageId) ?? [])),
  );
}
