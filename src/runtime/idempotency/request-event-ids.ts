/**
 * Events written inside an idempotent request: each carries the request's key in the
 * `idempotency-key` transport header, and its messageId is derived from the key, the request's
 * fingerprint and the event's position within the request (UUID version 5, RFC 9562). Two
 * executions of one intent (a retry after a lost lease, racing processes) can therefore only
 * ever produce the same messageIds, which the outbox's unique event_id and every inbox
 * deduplicate.
 *
 * The scope is tied to the Transaction object the idempotent handler receives: pass that `tx` to
 * the generated outbox writers.
 */
import { v5 as uuidV5 } from 'uuid';
import type { Transaction } from '../db/database.js';
import type { EnvelopeMeta } from '../envelope.js';

/** Transport header carrying the request's key on every event written inside it. */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';

/** Namespace of evgen's request-derived messageIds (a fixed random UUID). */
const REQUEST_EVENT_NAMESPACE = '5a0c3f0e-8f4b-4d3e-9a61-2f1f4f1c7b42';

interface RequestScope {
  readonly key: string;
  readonly fingerprint: string;
  position: number;
}

const scopes = new WeakMap<Transaction, RequestScope>();

/** Marks `tx` as the transaction of the idempotent request `key` (for evgen's core only). */
export function enterRequestScope(tx: Transaction, key: string, fingerprint: string): void {
  scopes.set(tx, { key, fingerprint, position: 0 });
}

/** The messageId of the `position`-th (0-based) event written inside request `key`. */
export function requestEventMessageId(key: string, fingerprint: string, position: number): string {
  return uuidV5(JSON.stringify([key, fingerprint, position]), REQUEST_EVENT_NAMESPACE);
}

/**
 * The writer's context for the next event written in `tx`: unchanged outside an idempotent
 * request; inside one, with the key header and (unless the caller fixed one) the derived
 * messageId. Every call takes the next position, so call it once per event, in write order.
 */
export function requestEventContext<
  C extends EnvelopeMeta & { readonly headers?: Readonly<Record<string, string>> },
>(tx: Transaction, context: C, keyHeader = true): C {
  const scope = scopes.get(tx);
  if (scope === undefined) return context;
  const position = scope.position++;
  const messageId =
    context.messageId ?? requestEventMessageId(scope.key, scope.fingerprint, position);
  // The CDC outbox has columns only for the trace headers: its events get the derived id only.
  if (!keyHeader) return { ...context, messageId };
  return {
    ...context,
    messageId,
    headers: { ...context.headers, [IDEMPOTENCY_KEY_HEADER]: scope.key },
  };
}
