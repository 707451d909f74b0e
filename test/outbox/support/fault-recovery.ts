/** Recovery after a fault, measured from publish times, and the checks the relay fault tests share. */
import { isUnavailableError, RecordingPublisher } from 'evgen/runtime';
import { classifyError } from '../../../src/runtime/errors.js';

/**
 * After a fault ends at `endedAt`: how long until every aggregate had published its next waiting
 * row (recovery: a row held back by a lost SENT mark stalls its aggregate for a whole lease), and
 * until every row written before the end was published (caught up: bound by the backlog, one
 * confirm at a time per aggregate).
 */
export function recovery(
  waited: readonly { id: string; aggregate: string }[],
  publishedAt: ReadonlyMap<string, number>,
  endedAt: number,
  aggregates: readonly string[],
): { recoveryMs: number; caughtUpMs: number } {
  const after = (row: { id: string }) => publishedAt.get(row.id)! - endedAt;
  const resumed = aggregates.map((aggregate) => {
    const pending = waited.filter((row) => row.aggregate === aggregate && after(row) >= 0);
    return pending.length === 0 ? 0 : Math.min(...pending.map(after));
  });
  return {
    recoveryMs: Math.max(0, ...resumed),
    caughtUpMs: Math.max(0, ...waited.map(after)),
  };
}

/**
 * Errors a relay reported under a database fault that are not transient: neither unavailability
 * nor a retryable failure (a deadlock 1213, a lock-wait timeout 1205: reported, their marks
 * kept). A fault test expects none.
 */
export function nonTransientErrors(errors: readonly unknown[]): unknown[] {
  return errors.filter(
    (error) => !isUnavailableError(error) && classifyError(error) !== 'retryable',
  );
}

/** The messageIds published for `aggregate`, in publish order. */
export function publishedFor(
  published: readonly { readonly envelope: { messageId: string; aggregateId: string } }[],
  aggregate: string,
): string[] {
  return published
    .filter((m) => m.envelope.aggregateId === aggregate)
    .map((m) => m.envelope.messageId);
}

/** A RecordingPublisher whose every publish takes `confirmMs` before it is confirmed. */
export function slowRecordingPublisher(confirmMs: number): RecordingPublisher {
  const publisher = new RecordingPublisher();
  const record = publisher.publish.bind(publisher);
  publisher.publish = async (message) => {
    await new Promise((resolve) => setTimeout(resolve, confirmMs));
    return record(message);
  };
  return publisher;
}
