/**
 * The delivery conformance suite: one test body, run over every transport (the in-process broker,
 * RabbitMQ, Kafka with kafkajs and with @platformatic/kafka, Pulsar, on the real brokers). Each transport
 * runs the same inbox consumer through the shared delivery core, and must show the same outcome
 * for: a malformed body, a messageId disagreement, unsubscribed and unknown types, a newer version
 * (readable under FULL, dead-lettered under BACKWARD), retryable and non-retryable failures, retry
 * exhaustion (a dead letter with its facts), a duplicate, in-order handling across a gap, and a
 * stop while a handler runs. A new transport is done when it passes this suite.
 *
 * The lifecycle block runs over every transport and the outbox relay: concurrent starts, a stop
 * during start, stop twice, stop before start, start after stop, a stop while the breaker (the
 * relay's outage backoff) is open and a stop during a handler, each asserting the runner's state,
 * the connections it holds open and that no message is lost or handled twice.
 */
import { acceptAnyDescriptor } from '../support/accept-any-descriptor.js';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createEnvelope,
  createInboxConsumer,
  migrateInbox,
  NonRetryableError,
  postgresDatabase,
  RetryableError,
  UnavailableError,
  type ConsumerContext,
  type DeliveryCounts,
  type Envelope,
  type EventVersionDescriptor,
  type InboxConsumer,
  type Transaction,
} from 'evgen/runtime';
import { createTestSchema, type TestSchema } from '../support/postgres.js';
import {
  CONSUMER,
  TRANSPORTS,
  type Letter,
  type TransportUnderTest,
} from './support/transports.js';
import { LIFECYCLE_SUBJECTS, type LifecycleSubject } from './support/lifecycle-subjects.js';

type Mode = 'ok' | 'retry-once' | 'retry-always' | 'poison' | 'ordered' | 'block';
interface Payload {
  readonly orderId: string;
  readonly mode: Mode;
}

const CANCELLED = acceptAnyDescriptor<Payload>('order.OrderCancelled', { compatibility: 'FULL' });
const CREATED = acceptAnyDescriptor<Payload>('order.OrderCreated', { compatibility: 'BACKWARD' });
const MAX_ATTEMPTS = 3;

async function waitFor(what: string, condition: () => Promise<boolean> | boolean): Promise<void> {
  const until = Date.now() + 60_000;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error(`${what}: not reached within 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.each(TRANSPORTS)('delivery conformance: $name', (entry) => {
  let transport: TransportUnderTest;
  let pg: TestSchema;
  let gate: () => void = () => undefined;
  let blocked: Promise<void> = Promise.resolve();
  let handlerEntered = false;
  const attemptsSeen = new Map<string, number[]>();

  beforeAll(async () => {
    pg = await createTestSchema('evgen_conformance');
    const db = postgresDatabase(pg.pool);
    await migrateInbox(db, { schema: pg.schema });
    await pg.pool.query(
      `CREATE TABLE "${pg.schema}".effects (id serial PRIMARY KEY, message_id text NOT NULL, order_id text NOT NULL, version int)`,
    );
    const effect = async (envelope: Envelope<string, 1, Payload>, tx: Transaction) => {
      await tx.query(
        `INSERT INTO "${pg.schema}".effects (message_id, order_id, version) VALUES ($1, $2, $3)`,
        [envelope.messageId, envelope.payload.orderId, envelope.aggregateVersion ?? null],
      );
    };
    const consumer: InboxConsumer = createInboxConsumer(
      { name: CONSUMER, descriptors: [CANCELLED, CREATED] },
      {
        db,
        inbox: { schema: pg.schema },
        handlers: {
          'order.OrderCancelled': {
            1: async (envelope: Envelope<string, 1, Payload>, ctx: ConsumerContext) => {
              const seen = attemptsSeen.get(envelope.messageId) ?? [];
              attemptsSeen.set(envelope.messageId, [...seen, ctx.attempt]);
              switch (envelope.payload.mode) {
                case 'retry-once':
                  if (ctx.attempt === 1) throw new RetryableError('stock service busy');
                  break;
                case 'retry-always':
                  throw new RetryableError('stock service busy, again');
                case 'poison':
                  throw new NonRetryableError('reservation in an illegal state');
                case 'ordered':
                  await ctx.inOrder(() => effect(envelope, ctx.tx));
                  return;
                case 'block':
                  handlerEntered = true;
                  await blocked;
                  break;
                case 'ok':
                  break;
              }
              await effect(envelope, ctx.tx);
            },
          },
          'order.OrderCreated': {
            1: async (envelope: Envelope<string, 1, Payload>, ctx: ConsumerContext) =>
              effect(envelope, ctx.tx),
          },
        },
      },
    );
    transport = entry.create();
    await transport.start(consumer, MAX_ATTEMPTS);
  }, 120_000);

  afterAll(async () => {
    gate();
    await transport?.cleanup();
    await pg?.drop();
  });

  const envelope = (
    of: EventVersionDescriptor<string, 1, Payload> = CANCELLED,
    mode: Mode = 'ok',
    meta: { orderId?: string; version?: number } = {},
  ) =>
    createEnvelope(
      of,
      { orderId: meta.orderId ?? randomUUID(), mode },
      meta.version !== undefined ? { aggregateVersion: meta.version } : {},
    );
  const send = (
    e: Envelope,
    overrides: { body?: object; messageId?: string; eventType?: string | null } = {},
  ) =>
    transport.send({
      body: JSON.stringify(overrides.body ?? e),
      messageId: overrides.messageId ?? e.messageId,
      ...(overrides.eventType === null ? {} : { eventType: overrides.eventType ?? e.eventType }),
      key: e.aggregateId,
    });
  const effects = async (messageId: string) =>
    Number(
      (
        await pg.pool.query<{ n: string }>(
          `SELECT count(*) AS n FROM "${pg.schema}".effects WHERE message_id = $1`,
          [messageId],
        )
      ).rows[0]!.n,
    );
  const letterOf = async (messageId: string): Promise<Letter | undefined> =>
    (await transport.deadLetters()).find((letter) => letter.messageId === messageId);
  const delta = (before: DeliveryCounts) => {
    const now = transport.metrics();
    return {
      handled: now.handled - before.handled,
      duplicates: now.duplicates - before.duplicates,
      skipped: now.skipped - before.skipped,
      retried: now.retried - before.retried,
      deadLettered: now.deadLettered - before.deadLettered,
    };
  };

  it('a body that is not an envelope is dead-lettered at once as malformed', async () => {
    const before = transport.metrics();
    const id = randomUUID();
    await transport.send({ body: '{"not": "an envelope"', messageId: id, key: 'k-malformed' });
    await waitFor('dead letter', async () => (await letterOf(id)) !== undefined);
    expect(await letterOf(id)).toMatchObject({
      errorType: 'MalformedMessageError',
      attempts: 1,
      consumer: CONSUMER,
    });
    expect(delta(before)).toMatchObject({ retried: 0, deadLettered: 1, handled: 0 });
  });

  it('a messageId beside the body that disagrees with the body is dead-lettered as malformed', async () => {
    const e = envelope();
    const other = randomUUID();
    await send(e, { messageId: other });
    await waitFor('dead letter', async () => (await letterOf(other)) !== undefined);
    expect((await letterOf(other))!.errorType).toBe('MalformedMessageError');
    expect(await effects(e.messageId)).toBe(0);
  });

  it('unsubscribed and unknown types are skipped: settled, never retried or dead-lettered', async () => {
    const before = transport.metrics();
    const shipped = { ...envelope(), eventType: 'order.OrderShipped' };
    const unknown = { ...envelope(), eventType: 'order.OrderRefunded' };
    // A foreign producer that sent no eventType beside the body: the body's type decides.
    await send(shipped, { eventType: null });
    await send(unknown, { eventType: null });
    let expected = 2;
    if (transport.deliversEveryType) {
      await send({ ...envelope(), eventType: 'order.OrderShipped' });
      await send({ ...envelope(), eventType: 'order.OrderRefunded' });
      expected = 4;
    }
    await waitFor('skipped', () => delta(before).skipped === expected);
    // Something sent after them is handled, so nothing is stuck behind the skipped ones.
    const after = envelope();
    await send(after);
    await waitFor('handled after', async () => (await effects(after.messageId)) === 1);
    // The effect commits before the runner settles and counts the delivery: wait for the count.
    await waitFor('handled counted', () => delta(before).handled === 1);
    expect(delta(before)).toMatchObject({
      skipped: expected,
      retried: 0,
      deadLettered: 0,
      handled: 1,
    });
    expect(await letterOf(shipped.messageId)).toBeUndefined();
  });

  it('a newer version is read with the newest reader under FULL and dead-lettered with the reason under BACKWARD', async () => {
    const base = envelope(CANCELLED);
    const readable = {
      ...base,
      schemaVersion: 2,
      payload: { ...base.payload, addedInV2: true },
    };
    const unreadable = { ...envelope(CREATED), schemaVersion: 2 };
    await send(readable);
    await send(unreadable);
    await waitFor('newer handled', async () => (await effects(readable.messageId)) === 1);
    await waitFor(
      'newer dead-lettered',
      async () => (await letterOf(unreadable.messageId)) !== undefined,
    );
    expect(await letterOf(unreadable.messageId)).toMatchObject({
      errorType: 'UnknownEventError',
      errorMessage: expect.stringContaining('compatibility mode BACKWARD does not promise'),
      attempts: 1,
    });
  });

  it('a retryable failure is retried (ctx.attempt 1, then 2) and handled once', async () => {
    const before = transport.metrics();
    const e = envelope(CANCELLED, 'retry-once');
    await send(e);
    await waitFor('handled on retry', async () => (await effects(e.messageId)) === 1);
    expect(attemptsSeen.get(e.messageId)).toEqual([1, 2]);
    expect(delta(before)).toMatchObject({ retried: 1, handled: 1, deadLettered: 0 });
  });

  it('a non-retryable failure is dead-lettered at once with its facts', async () => {
    const e = envelope(CANCELLED, 'poison');
    await send(e);
    await waitFor('dead letter', async () => (await letterOf(e.messageId)) !== undefined);
    expect(await letterOf(e.messageId)).toEqual({
      messageId: e.messageId,
      errorType: 'NonRetryableError',
      errorMessage: expect.stringContaining('reservation in an illegal state'),
      attempts: 1,
      consumer: CONSUMER,
    });
    expect(attemptsSeen.get(e.messageId)).toEqual([1]);
  });

  it('retries exhausted: a dead letter after the last attempt, with the attempts made', async () => {
    const e = envelope(CANCELLED, 'retry-always');
    await send(e);
    await waitFor('dead letter', async () => (await letterOf(e.messageId)) !== undefined);
    expect(await letterOf(e.messageId)).toEqual({
      messageId: e.messageId,
      errorType: 'RetryableError',
      errorMessage: expect.stringContaining('stock service busy, again'),
      attempts: MAX_ATTEMPTS,
      consumer: CONSUMER,
    });
    expect(attemptsSeen.get(e.messageId)).toEqual([1, 2, 3]);
    expect(await effects(e.messageId)).toBe(0);
  });

  it('a duplicate is absorbed by the inbox: one effect, counted as a duplicate', async () => {
    const before = transport.metrics();
    const e = envelope();
    await send(e);
    await waitFor('first', async () => (await effects(e.messageId)) === 1);
    await send(e);
    await waitFor('duplicate', () => delta(before).duplicates === 1);
    expect(await effects(e.messageId)).toBe(1);
    expect(delta(before)).toMatchObject({ handled: 2, duplicates: 1, retried: 0 });
  });

  it('in order across a gap: version 2 before version 1 waits, then both apply in order', async () => {
    const orderId = randomUUID();
    const v1 = envelope(CANCELLED, 'ordered', { orderId, version: 1 });
    const v2 = envelope(CANCELLED, 'ordered', { orderId, version: 2 });
    await send(v2);
    await waitFor('v2 tried', () => (attemptsSeen.get(v2.messageId)?.length ?? 0) >= 1);
    await send(v1);
    await waitFor('both applied', async () => (await effects(v2.messageId)) === 1);
    const { rows } = await pg.pool.query<{ version: number }>(
      `SELECT version FROM "${pg.schema}".effects WHERE order_id = $1 ORDER BY id`,
      [orderId],
    );
    expect(rows.map((r) => r.version)).toEqual([1, 2]);
    expect(await letterOf(v2.messageId)).toBeUndefined();
  });

  it('stop while a handler runs: stop waits for it, its effect commits, nothing is lost', async () => {
    blocked = new Promise((resolve) => (gate = resolve));
    handlerEntered = false;
    const e = envelope(CANCELLED, 'block');
    await send(e);
    await waitFor('handler running', () => handlerEntered);
    let stopped = false;
    const stopping = transport.stop().then(() => (stopped = true));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(stopped).toBe(false);
    gate();
    await stopping;
    expect(await effects(e.messageId)).toBe(1);
  });
});

describe.each(LIFECYCLE_SUBJECTS)('runner lifecycle: $name', (entry) => {
  let subject: LifecycleSubject;
  let mode: 'ok' | 'block' | 'unavailable' = 'ok';
  let gate: () => void = () => undefined;
  let blocked: Promise<void> = Promise.resolve();
  /** Handling attempts and effects per messageId. */
  const attempts = new Map<string, number>();
  const effects = new Map<string, number>();

  beforeAll(async () => {
    subject = entry.create();
    await subject.setup(async (messageId) => {
      attempts.set(messageId, (attempts.get(messageId) ?? 0) + 1);
      if (mode === 'unavailable') throw new UnavailableError('database down');
      if (mode === 'block') await blocked;
      effects.set(messageId, (effects.get(messageId) ?? 0) + 1);
    });
  }, 120_000);

  afterAll(async () => {
    gate();
    await subject?.cleanup();
  });

  const effectsOf = (messageId: string) => effects.get(messageId) ?? 0;
  const stopped = (runner: { readonly state: string }) => {
    expect(runner.state).toBe('stopped');
    expect(subject.connections()).toBe(0);
  };
  const running = (runner: { readonly state: string }) => {
    expect(runner.state).toBe('running');
    expect(subject.connections()).toBe(subject.connectionsWhenRunning);
  };
  /** Handled once, and not again within a while. */
  const handledOnce = async (messageId: string) => {
    await waitFor(`${messageId} handled`, () => effectsOf(messageId) >= 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(effectsOf(messageId)).toBe(1);
  };

  it('concurrent starts open one connection and handle each message once', async () => {
    mode = 'ok';
    const runner = subject.runner();
    expect(runner.state).toBe('new');
    await Promise.all([runner.start(), runner.start(), runner.start()]);
    running(runner);
    const id = await subject.send();
    await handledOnce(id);
    await runner.stop();
    stopped(runner);
  });

  it('a stop during start wins: the runner ends stopped, nothing stays open, nothing is taken', async () => {
    mode = 'ok';
    const runner = subject.runner();
    const starting = runner.start();
    expect(runner.state).toBe('starting');
    await runner.stop();
    await starting.catch(() => undefined);
    stopped(runner);
    const id = await subject.send();
    await new Promise((resolve) => setTimeout(resolve, 500));
    stopped(runner);
    expect(effectsOf(id)).toBe(0);
    // Nothing was lost meanwhile: started again, it takes the message once.
    await runner.start();
    running(runner);
    await handledOnce(id);
    await runner.stop();
    stopped(runner);
  });

  it('stop before start, stop twice and a stop of a stopped runner all resolve and close everything', async () => {
    mode = 'ok';
    const runner = subject.runner();
    await runner.stop();
    stopped(runner);
    await runner.start();
    running(runner);
    await Promise.all([runner.stop(), runner.stop()]);
    stopped(runner);
    await runner.stop();
    stopped(runner);
  });

  it('start after stop runs again: messages sent while stopped are handled once', async () => {
    mode = 'ok';
    const runner = subject.runner();
    await runner.start();
    const before = await subject.send();
    await handledOnce(before);
    await runner.stop();
    const whileStopped = await subject.send();
    await runner.start();
    running(runner);
    await handledOnce(whileStopped);
    expect(effectsOf(before)).toBe(1);
    await runner.stop();
    stopped(runner);
  });

  it('a stop while the breaker is open ends at once; the message waits and is handled once after', async () => {
    mode = 'unavailable';
    const runner = subject.runner();
    await runner.start();
    const id = await subject.send();
    await waitFor('dependency found down', () => (attempts.get(id) ?? 0) >= 1);
    // The breaker's pause is two minutes: a stop that waited for it would time the test out.
    await runner.stop();
    stopped(runner);
    expect(effectsOf(id)).toBe(0);
    mode = 'ok';
    await runner.start();
    running(runner);
    await handledOnce(id);
    await runner.stop();
    stopped(runner);
  });

  it('a stop during a handler waits for it: its effect happens once, never again after a restart', async () => {
    mode = 'block';
    blocked = new Promise((resolve) => (gate = resolve));
    const runner = subject.runner();
    await runner.start();
    const id = await subject.send();
    await waitFor('handler running', () => (attempts.get(id) ?? 0) >= 1);
    let done = false;
    const stopping = runner.stop().then(() => (done = true));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(done).toBe(false);
    expect(runner.state).toBe('stopping');
    gate();
    await stopping;
    stopped(runner);
    expect(effectsOf(id)).toBe(1);
    mode = 'ok';
    await runner.start();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(effectsOf(id)).toBe(1);
    await runner.stop();
    stopped(runner);
  });
});
