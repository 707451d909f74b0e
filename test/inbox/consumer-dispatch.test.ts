/**
 * The consumer runtime behind generated consumer modules: typed dispatch by event type and
 * version, upcasting, precise non-retryable rejections, and the guard around it — on the real
 * PostgreSQL and on PGlite.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createInboxConsumer,
  InboxHandlerError,
  migrateInbox,
  NonRetryableError,
  UnknownEventError,
  ValidationError,
  newMessageId,
  type ConsumerHandler,
  type InboxConsumer,
  type Upcaster,
} from 'evgen/runtime';
import {
  BACKENDS,
  countRows,
  createEffectsTable,
  openBackend,
  type Backend,
} from './support/backends.js';
import {
  lostV1,
  parcelDescriptors,
  sentV1,
  sentV2,
  type ParcelLostV1Envelope,
  type ParcelSentV1Envelope,
  type ParcelSentV1Payload,
  type ParcelSentV2Envelope,
  type ParcelSentV2Payload,
} from './support/test-events.js';

interface ParcelHandlers {
  readonly 'parcel.ParcelSent': {
    readonly 2: ConsumerHandler<ParcelSentV2Envelope>;
    readonly 1?: ConsumerHandler<ParcelSentV1Envelope>;
  };
  readonly 'parcel.ParcelLost': { readonly 1: ConsumerHandler<ParcelLostV1Envelope> };
}
interface ParcelUpcasters {
  readonly 'parcel.ParcelSent'?: {
    readonly v1ToV2?: Upcaster<ParcelSentV1Payload, ParcelSentV2Payload>;
  };
}

const backends: Backend[] = [];
beforeAll(async () => {
  backends.push(...(await Promise.all(BACKENDS.map(openBackend))));
  await Promise.all(backends.map((b) => migrateInbox(b.db, { schema: b.schema })));
});
afterAll(async () => {
  await Promise.all(backends.map((b) => b.close()));
});

async function rejection(promise: Promise<unknown>): Promise<Error & { retryable: boolean }> {
  return promise.then(
    () => expect.unreachable('should have rejected'),
    (error: unknown) => error as Error & { retryable: boolean },
  );
}

describe.each([0, 1, 2])(
  'consumer runtime (backend %i: 0 = postgres, 1 = pglite, 2 = mariadb)',
  (which) => {
    const backend = () => backends[which]!;

    async function setUp(
      options: {
        upcasters?: ParcelUpcasters;
        withV1Handler?: boolean;
        compatibility?: string;
      } = {},
    ) {
      const b = backend();
      const effects = await createEffectsTable(b);
      const seen: { version: number; weightKg: number; delivered: number }[] = [];
      const handlers: ParcelHandlers = {
        'parcel.ParcelSent': {
          2: async (envelope, ctx) => {
            seen.push({
              version: envelope.schemaVersion,
              weightKg:
                envelope.payload.weight.unit === 'kg'
                  ? envelope.payload.weight.value
                  : envelope.payload.weight.value / 1000,
              delivered: ctx.delivered.schemaVersion,
            });
            await ctx.tx.query(
              b.sql(`INSERT INTO ${effects} (message_id, consumer) VALUES ($1, $2)`),
              [envelope.messageId, ctx.consumer],
            );
          },
          ...(options.withV1Handler === true
            ? {
                1: async (envelope: ParcelSentV1Envelope) => {
                  seen.push({
                    version: 1,
                    weightKg: envelope.payload.weightGrams / 1000,
                    delivered: 1,
                  });
                },
              }
            : {}),
        },
        'parcel.ParcelLost': {
          1: async (envelope, ctx) => {
            await ctx.inOrder(async () => {
              await ctx.tx.query(
                b.sql(`INSERT INTO ${effects} (message_id, consumer) VALUES ($1, $2)`),
                [envelope.messageId, 'lost'],
              );
            });
          },
        },
      };
      const consumer: InboxConsumer = createInboxConsumer<ParcelHandlers, ParcelUpcasters>(
        {
          name: 'parcel-tracker',
          descriptors:
            options.compatibility === undefined
              ? parcelDescriptors
              : parcelDescriptors.map((d) => ({ ...d, compatibility: options.compatibility })),
        },
        {
          db: b.db,
          handlers,
          inbox: { schema: b.schema },
          ...(options.upcasters ? { upcasters: options.upcasters } : {}),
        },
      );
      return { b, effects, seen, consumer };
    }

    it('dispatches by type and version, from objects, JSON text and bytes; a redelivery is a duplicate', async () => {
      const { b, effects, seen, consumer } = await setUp();
      expect(consumer.name).toBe('parcel-tracker');
      expect(consumer.subscribes).toEqual(['parcel.ParcelLost', 'parcel.ParcelSent']);
      const envelope = sentV2();
      expect(await consumer.handle(envelope)).toBe('handled');
      expect(await consumer.handle(JSON.stringify(envelope))).toBe('duplicate');
      expect(await consumer.handle(Buffer.from(JSON.stringify(envelope)))).toBe('duplicate');
      expect(seen).toEqual([{ version: 2, weightKg: 2, delivered: 2 }]);
      expect(await countRows(b.db, effects)).toBe(1);
    });

    it('upcasts a v1 envelope for a consumer that implements only v2', async () => {
      const { seen, consumer } = await setUp({
        upcasters: {
          'parcel.ParcelSent': {
            v1ToV2: (payload) => ({
              parcelId: payload.parcelId,
              weight: { value: payload.weightGrams, unit: 'g' },
            }),
          },
        },
      });
      expect(await consumer.handle(sentV1())).toBe('handled');
      expect(seen).toEqual([{ version: 2, weightKg: 1.5, delivered: 1 }]);
    });

    it('prefers a handler written for the delivered version over upcasting', async () => {
      const { seen, consumer } = await setUp({
        withV1Handler: true,
        upcasters: {
          'parcel.ParcelSent': { v1ToV2: () => expect.unreachable('upcaster must not run') },
        },
      });
      await consumer.handle(sentV1());
      expect(seen).toEqual([{ version: 1, weightKg: 1.5, delivered: 1 }]);
    });

    it('an upcaster returning an invalid payload is a non-retryable failure that leaves no inbox row', async () => {
      const { b, consumer } = await setUp({
        upcasters: {
          'parcel.ParcelSent': {
            v1ToV2: (payload) => ({ parcelId: payload.parcelId }) as unknown as ParcelSentV2Payload,
          },
        },
      });
      const envelope = sentV1();
      const error = await rejection(consumer.handle(envelope));
      expect(error).toBeInstanceOf(InboxHandlerError);
      expect(error.retryable).toBe(false);
      expect(error.message).toContain('upcaster v1ToV2');
      expect(error.message).toContain('/weight');
      expect(
        await countRows(b.db, b.table('inbox_message'), 'message_id = $1', [envelope.messageId]),
      ).toBe(0);
    });

    it('rejects a version it has neither a handler nor an upcaster for, non-retryably', async () => {
      const { consumer } = await setUp();
      const error = await rejection(consumer.handle(sentV1()));
      expect(error).toBeInstanceOf(NonRetryableError);
      expect(error.retryable).toBe(false);
      expect(error.message).toMatch(
        /parcel-tracker has no handler for parcel\.ParcelSent v1 .*missing upcaster v1ToV2/,
      );
    });

    it.each(['FORWARD', 'FULL', 'FORWARD_TRANSITIVE', 'FULL_TRANSITIVE'])(
      'reads a newer version with the newest reader schema when the mode is %s',
      async (compatibility) => {
        const { seen, consumer } = await setUp({ compatibility });
        const newer = { ...sentV2(), schemaVersion: 7 };
        const withAddition = { ...newer, payload: { ...newer.payload, addedInV7: 'ignored' } };
        expect(await consumer.handle(withAddition)).toBe('handled');
        expect(seen).toEqual([{ version: 2, weightKg: expect.any(Number), delivered: 2 }]);
      },
    );

    it.each(['BACKWARD', 'BACKWARD_TRANSITIVE', 'NONE'])(
      'rejects a newer version as non-retryable, saying why, when the mode is %s',
      async (compatibility) => {
        const { seen, consumer } = await setUp({ compatibility });
        const error = await rejection(consumer.handle({ ...sentV2(), schemaVersion: 3 }));
        expect(error).toBeInstanceOf(UnknownEventError);
        expect(error.retryable).toBe(false);
        expect(error.message).toContain(`compatibility mode ${compatibility} does not promise`);
        expect(seen).toEqual([]);
      },
    );

    it('rejects unknown types, unknown versions, invalid payloads and garbage as non-retryable, with precise messages', async () => {
      const { consumer } = await setUp();
      const unknownType = await rejection(
        consumer.handle({ ...sentV2(), eventType: 'parcel.ParcelEaten' }),
      );
      expect(unknownType).toBeInstanceOf(UnknownEventError);
      expect(unknownType.retryable).toBe(false);
      expect(unknownType.message).toContain('consumer parcel-tracker');
      expect(unknownType.message).toContain('parcel.ParcelEaten');

      const unknownVersion = await rejection(consumer.handle({ ...sentV2(), schemaVersion: 3 }));
      expect(unknownVersion).toBeInstanceOf(UnknownEventError);
      expect(unknownVersion.message).toMatch(/version 3 of parcel\.ParcelSent \(known: 1, 2\)/);
      expect(unknownVersion.message).toContain('compatibility mode (not declared)');

      const envelope = sentV2();
      const invalid = await rejection(
        consumer.handle({
          ...envelope,
          payload: { ...envelope.payload, weight: { value: -1, unit: 'lb' } },
        }),
      );
      expect(invalid).toBeInstanceOf(ValidationError);
      expect(invalid.retryable).toBe(false);
      expect(invalid.message).toContain('/payload/weight/value');
      expect(invalid.message).toContain('/payload/weight/unit');

      const garbage = await rejection(consumer.handle('{not json'));
      expect(garbage).toBeInstanceOf(ValidationError);
      expect(garbage.message).toContain('JSON');
    });

    it('ctx.inOrder applies in aggregate order; a gap is retryable and the message succeeds once the gap is filled', async () => {
      const { b, effects, consumer } = await setUp();
      const parcel = newMessageId();
      const second = lostV1(parcel, 2);
      const gap = await rejection(consumer.handle(second));
      expect(gap).toBeInstanceOf(InboxHandlerError);
      expect(gap.retryable).toBe(true);
      expect(await consumer.handle(lostV1(parcel, 1))).toBe('handled');
      expect(await consumer.handle(second)).toBe('handled');
      expect(await consumer.handle(lostV1(parcel, 2))).toBe('handled'); // a different message id for an applied version: stale, skipped
      expect(await countRows(b.db, effects, 'consumer = $1', ['lost'])).toBe(2);
      const noVersion = await rejection(consumer.handle(lostV1()));
      expect(noVersion.retryable).toBe(false);
      expect(noVersion.message).toContain('no aggregateVersion');
    });

    it('ordering options reach ctx.inOrder: with allowGaps a state projection skips ahead but never back', async () => {
      const b = backend();
      const effects = await createEffectsTable(b);
      const consumer = createInboxConsumer<ParcelHandlers>(
        { name: 'parcel-projection', descriptors: parcelDescriptors },
        {
          db: b.db,
          inbox: { schema: b.schema },
          ordering: { allowGaps: true },
          handlers: {
            'parcel.ParcelSent': { 2: async () => undefined },
            'parcel.ParcelLost': {
              1: async (envelope, ctx) => {
                // The query's own promise, not Promise<void>: inOrder ignores what apply returns.
                await ctx.inOrder(() =>
                  ctx.tx.query(
                    b.sql(`INSERT INTO ${effects} (message_id, consumer) VALUES ($1, 'p')`),
                    [envelope.messageId],
                  ),
                );
              },
            },
          },
        },
      );
      const parcel = newMessageId();
      expect(await consumer.handle(lostV1(parcel, 5))).toBe('handled');
      expect(await consumer.handle(lostV1(parcel, 3))).toBe('handled');
      expect(await consumer.handle(lostV1(parcel, 6))).toBe('handled');
      expect(await countRows(b.db, effects)).toBe(2);
    });

    it('handleBatch: one transaction, per-delivery results in order, parse failures included', async () => {
      const { b, effects, consumer } = await setUp();
      const first = sentV2();
      expect(await consumer.handle(first)).toBe('handled');
      const second = sentV2();
      const results = await consumer.handleBatch([
        second,
        '{oops',
        { ...sentV2(), eventType: 'parcel.ParcelEaten' },
        first,
        JSON.stringify(second),
      ]);
      expect(results.map((r) => r.outcome)).toEqual([
        'handled',
        'failed',
        'failed',
        'duplicate',
        'duplicate',
      ]);
      const [, garbage, unknown] = results;
      expect(garbage?.outcome === 'failed' && garbage.error).toBeInstanceOf(ValidationError);
      expect(unknown?.outcome === 'failed' && unknown.error).toBeInstanceOf(UnknownEventError);
      expect(await countRows(b.db, effects)).toBe(2);
    });

    it('refuses handler tables that name events or versions it does not subscribe to', () => {
      const b = backend();
      const make = (handlers: unknown, upcasters?: unknown) => () =>
        createInboxConsumer(
          { name: 'parcel-tracker', descriptors: parcelDescriptors },
          { db: b.db, handlers, upcasters },
        );
      const ok = {
        'parcel.ParcelSent': { 2: async () => undefined },
        'parcel.ParcelLost': { 1: async () => undefined },
      };
      expect(make(ok)).not.toThrow();
      expect(make({ ...ok, 'parcel.ParcelEaten': { 1: async () => undefined } })).toThrow(
        /does not subscribe/,
      );
      expect(make({ ...ok, 'parcel.ParcelSent': { 3: async () => undefined } })).toThrow(
        /unknown version parcel\.ParcelSent v3/,
      );
      expect(make({ 'parcel.ParcelSent': ok['parcel.ParcelSent'] })).toThrow(
        /no handler for subscribed event parcel\.ParcelLost/,
      );
      expect(make(ok, { 'parcel.ParcelSent': { v2ToV3: () => undefined } })).toThrow(
        /unknown upcaster/,
      );
    });
  },
);
