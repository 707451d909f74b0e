/**
 * The scenario both transports' missing-destination tests run (test/kafka/missing-topic.test.ts,
 * test/rabbitmq/missing-exchange.test.ts): five rows of an event type routed to a topic or
 * exchange the broker does not have, written before five rows of a type routed to one it has,
 * all in one transaction so one claim holds both. The relay must publish the second type at once,
 * fail the first on its own (never as a broker outage), keep those rows, and publish them once the
 * destination exists.
 */
import { expect } from 'vitest';
import {
  createOutboxRelay,
  writeOutboxEvent,
  type Database,
  type EventVersionDescriptor,
  type OutboxRelay,
  type Publisher,
} from 'evgen-runtime';
import { waitFor } from '../../support/wait-for.js';
import { orderPlacedV1, type OrderPlacedV1Payload } from './test-event.js';

/** An event type for the destination that exists, and one for the destination that is missing. */
export const deliveredType = (eventType: string) =>
  ({ ...orderPlacedV1, eventType }) as unknown as EventVersionDescriptor<
    string,
    1,
    OrderPlacedV1Payload
  >;

export interface MissingDestinationScenario {
  readonly db: Database;
  /** The relay's publisher, routing `present` and `missing` (event types) to their destinations. */
  readonly publisher: Publisher;
  readonly present: string;
  readonly missing: string;
  /** What the missing rows' `last_error` says. */
  readonly missingError: RegExp;
  /** Creates the missing destination. */
  create(): Promise<void>;
  /** Gets the relay, to stop it after the test. */
  started(relay: OutboxRelay): void;
}

export async function runMissingDestinationScenario(s: MissingDestinationScenario): Promise<void> {
  const failures: { eventType: string; unavailable: boolean }[] = [];
  const relay = createOutboxRelay({
    db: s.db,
    notifyChannel: false,
    pollIntervalMs: 50,
    // Short backoff for the test; enough attempts that none goes DEAD before the destination exists.
    backoff: { baseMs: 200, capMs: 400, jitter: 0 },
    maxAttempts: 1_000,
    publisher: s.publisher,
    hooks: {
      onFailed: (message, failure) =>
        failures.push({
          eventType: message.envelope.eventType,
          unavailable: failure.unavailable === true,
        }),
    },
  });
  s.started(relay);
  await s.db.transaction(async (tx) => {
    for (let i = 0; i < 5; i++)
      await writeOutboxEvent(tx, deliveredType(s.missing), { orderId: `held-${i}`, amount: i });
    for (let i = 0; i < 5; i++)
      await writeOutboxEvent(tx, deliveredType(s.present), { orderId: `free-${i}`, amount: i });
  });
  const statuses = async () =>
    (
      await s.db.query<{ event_type: string; status: string; last_error: string | null }>(
        'SELECT event_type, status, last_error FROM outbox_event ORDER BY id',
      )
    ).rows;
  const sent = async (eventType: string) =>
    (await statuses()).filter((r) => r.event_type === eventType && r.status === 'SENT').length;
  await relay.start();

  // Well within one publish timeout (3 s by default), which every publish used to wait out.
  await waitFor(
    'the existing destination to get its five rows',
    async () => ((await sent(s.present)) === 5 ? true : undefined),
    2_500,
  );
  await waitFor(
    'the missing destination to fail its rows',
    () => (failures.length >= 5 ? true : undefined),
    5_000,
  );
  const held = (await statuses()).filter((r) => r.event_type === s.missing);
  expect(held.map((r) => r.status)).not.toContain('SENT');
  expect(held.map((r) => r.status)).not.toContain('DEAD');
  expect(held[0]!.last_error).toMatch(s.missingError);
  expect(failures.every((f) => f.eventType === s.missing)).toBe(true);
  expect(failures.some((f) => f.unavailable)).toBe(false);

  // Created: the held rows follow after their backoff and the recheck.
  await s.create();
  await waitFor(
    'every row SENT after the destination was created',
    async () => ((await statuses()).every((r) => r.status === 'SENT') ? true : undefined),
    20_000,
  );
}
