/**
 * The runtime behind every generated consumer module: parse and validate a delivery, pick the
 * handler for its event type and version (upcasting older versions when the consumer only
 * implements newer ones), and run it inside the inbox guard. Generated code only supplies the
 * descriptors and the types.
 */
import type { Database, Transaction } from '../db/database.js';
import type { Envelope, EventVersionDescriptor } from '../envelope.js';
import { EvgenError, NonRetryableError, UnknownEventError, ValidationError } from '../errors.js';
import { createEnvelopeParser } from '../parse-envelope.js';
import {
  applyInOrder,
  checkOrder,
  markApplied,
  type AggregateVersionKey,
  type OrderVerdict,
} from './aggregate-order.js';
import { handleBatchWithInbox } from './inbox-batch.js';
import { handleWithInbox, type InboxOutcome } from './inbox-guard.js';
import type { InboxTableOptions } from './inbox-tables.js';
import type { DeliveryContext, DeliveryFacts } from '../delivery/delivery.js';
import type { SkippedDelivery } from '../delivery/message-handler.js';
import { SkippedVersionRecorder } from './skipped-versions.js';

/** What a handler gets beside the envelope. Write only through `tx`: it is the guard's transaction. */
export interface ConsumerContext {
  readonly tx: Transaction;
  /** The consumer's name (the inbox key). */
  readonly consumer: string;
  /** The envelope exactly as delivered, before any upcasting. */
  readonly delivered: Envelope;
  /** Which attempt this is, 1-based: 1 on the first delivery, n after n − 1 failed ones. */
  readonly attempt: number;
  /**
   * Where the delivery came from (transport, topic or queue, partition, offset, redelivered,
   * headers); undefined when `handle` was called directly rather than by a transport.
   */
  readonly delivery: DeliveryFacts | undefined;
  /** Ordering verdict for this event's aggregate and `aggregateVersion` (see `checkOrder`). */
  checkOrder(): Promise<OrderVerdict>;
  /** Records this event's `aggregateVersion` as applied. */
  markApplied(): Promise<void>;
  /**
   * Runs `apply` only if this event is the aggregate's next version; skips stale ones; throws a
   * retryable error on a gap. `apply`'s result is ignored, so a query builder's promise (Kysely's
   * `Promise<InsertResult[]>`) is passed as it is.
   */
  inOrder(apply: () => Promise<unknown>): Promise<'applied' | 'stale'>;
}

/** A typed handler for one event version. */
export type ConsumerHandler<E extends Envelope = Envelope> = (
  envelope: E,
  ctx: ConsumerContext,
) => Promise<void>;

/** Converts a payload of version N into version N+1. Pure and synchronous. */
export type Upcaster<From = unknown, To = unknown> = (
  payload: From,
  envelope: Envelope<string, number, From>,
) => To;

export interface InboxConsumerOptions<THandlers, TUpcasters = unknown> {
  /** The consumer's database: the inbox row and the handler's writes commit in one of its transactions. */
  readonly db: Database;
  /** Event type → schema version → handler. */
  readonly handlers: THandlers;
  /** Event type → `v<N>ToV<N+1>` → upcaster. */
  readonly upcasters?: TUpcasters;
  /** Inbox and ordering table location. */
  readonly inbox?: InboxTableOptions;
  /**
   * How `ctx.checkOrder`/`ctx.inOrder` judge versions (see AggregateVersionKey). Setting it (even
   * to `{}`) also says the handlers keep aggregate order: then an event the consumer skips (a type
   * it does not subscribe to, of an aggregate type it does) records its version like a handled
   * one, so the next subscribed event of that aggregate is not held up as a gap.
   */
  readonly ordering?: Pick<AggregateVersionKey, 'acceptFirstSeen' | 'allowGaps'>;
}

/** What generated code declares about a consumer. */
export interface InboxConsumerDefinition {
  /** kebab-case consumer name, e.g. `inventory-service`. */
  readonly name: string;
  /** Every version of every subscribed event. */
  readonly descriptors: readonly EventVersionDescriptor[];
}

/**
 * A ready consumer. `handle` resolves `handled` or `duplicate` once the transaction committed
 * (acknowledge the delivery then) and rejects with an EvgenError whose `retryable` tells the
 * transport whether to retry or dead-letter.
 */
export interface InboxConsumer {
  readonly name: string;
  /** Subscribed event types, sorted. */
  readonly subscribes: readonly string[];
  handle(raw: unknown, context?: DeliveryContext): Promise<InboxOutcome>;
  /**
   * Called by the transports for a delivery of a type the consumer does not subscribe to: with
   * `ordering` set, records its aggregate version (batched; see SkippedVersionRecorder).
   */
  skip(skipped: SkippedDelivery): Promise<void>;
  /**
   * Handles several deliveries in ONE transaction (a savepoint each; see handleBatchWithInbox).
   * Resolves after the commit with one result per delivery, in order; a failed one carries the
   * error `handle` would have rejected with. Rejects only when the batch transaction fails.
   */
  handleBatch(raws: readonly unknown[]): Promise<ConsumerBatchResult[]>;
}

export type ConsumerBatchResult =
  { readonly outcome: InboxOutcome } | { readonly outcome: 'failed'; readonly error: EvgenError };

// Tables hold handlers and upcasters of many payload types. Method parameters are checked
// bivariantly, so a handler of one specific envelope type fits without an `any`.
type AnyHandler = { handle(envelope: Envelope, ctx: ConsumerContext): Promise<void> }['handle'];
type AnyUpcaster = { upcast(payload: unknown, envelope: Envelope): unknown }['upcast'];
type HandlerTable = Readonly<
  Record<string, Readonly<Record<number, AnyHandler | undefined>> | undefined>
>;
type UpcasterTable = Readonly<
  Record<string, Readonly<Record<string, AnyUpcaster | undefined>> | undefined>
>;

/** Name of the upcaster from `version` to the next one: `v1ToV2`. */
export function upcasterKey(version: number): string {
  return `v${version}ToV${version + 1}`;
}

interface DispatchPlan {
  readonly handler: AnyHandler;
  readonly targetVersion: number;
  /** Upcasters to apply in order; empty when the handler takes the delivered version. */
  readonly steps: readonly {
    readonly key: string;
    readonly upcaster: AnyUpcaster;
    readonly to: EventVersionDescriptor;
  }[];
}

export function createInboxConsumer<THandlers, TUpcasters = unknown>(
  definition: InboxConsumerDefinition,
  options: InboxConsumerOptions<THandlers, TUpcasters>,
): InboxConsumer {
  const name = definition.name;
  const index = new DescriptorIndex(definition.descriptors);
  const parse = createEnvelopeParser(definition.descriptors);
  const handlers = options.handlers as unknown as HandlerTable;
  const upcasters = (options.upcasters ?? {}) as unknown as UpcasterTable;
  checkTables(name, index, handlers, upcasters);

  // Routes depend only on (type, version) and the fixed tables, so each is worked out once.
  const plans = new Map<string, DispatchPlan>();
  function plan(eventType: string, version: number): DispatchPlan {
    const cacheKey = `${eventType}\u0000${version}`;
    let route = plans.get(cacheKey);
    if (route === undefined) plans.set(cacheKey, (route = findPlan(eventType, version)));
    return route;
  }

  function findPlan(eventType: string, version: number): DispatchPlan {
    const byVersion = handlers[eventType] ?? {};
    const exact = byVersion[version];
    if (exact !== undefined) return { handler: exact, targetVersion: version, steps: [] };
    const steps: DispatchPlan['steps'][number][] = [];
    for (let from = version; ; from += 1) {
      const to = index.get(eventType, from + 1);
      const upcaster = upcasters[eventType]?.[upcasterKey(from)];
      if (to === undefined || upcaster === undefined) break;
      steps.push({ key: upcasterKey(from), upcaster, to });
      const handler = byVersion[from + 1];
      if (handler !== undefined) return { handler, targetVersion: from + 1, steps };
    }
    const handled = Object.keys(byVersion).filter((v) => byVersion[Number(v)] !== undefined);
    throw new NonRetryableError(
      `consumer ${name} has no handler for ${eventType} v${version} and no upcaster chain from v${version} to a handled version` +
        ` (handlers: ${handled.map((v) => `v${v}`).join(', ') || 'none'}; missing upcaster ${upcasterKey(version + steps.length)})`,
    );
  }

  // Skipped versions matter only to a consumer that keeps order, and only for aggregate types
  // of the events it handles.
  const orderedTypes = new Set(definition.descriptors.map((d) => d.aggregateType));
  const skipped =
    options.ordering !== undefined ? new SkippedVersionRecorder(options.db) : undefined;

  return {
    name,
    subscribes: index.eventTypes,
    async handle(raw: unknown, context?: DeliveryContext): Promise<InboxOutcome> {
      const { envelope, route } = prepare(raw);
      return handleWithInbox(
        options.db,
        { ...options.inbox, consumer: name, envelope },
        (tx, checked) => route.handler(upcast(checked, route), createContext(tx, checked, context)),
      );
    },
    async skip({ messageId, aggregate }: SkippedDelivery): Promise<void> {
      if (skipped === undefined || aggregate?.version === undefined) return;
      if (!orderedTypes.has(aggregate.type)) return;
      await skipped.record({
        ...options.inbox,
        ...options.ordering,
        consumer: name,
        aggregateType: aggregate.type,
        aggregateId: aggregate.id,
        version: aggregate.version,
        ...(messageId !== undefined ? { messageId } : {}),
      });
    },
    async handleBatch(raws: readonly unknown[]): Promise<ConsumerBatchResult[]> {
      const results: (ConsumerBatchResult | undefined)[] = [];
      const prepared: { index: number; envelope: Envelope; route: DispatchPlan }[] = [];
      raws.forEach((raw, index) => {
        try {
          prepared.push({ index, ...prepare(raw) });
          results.push(undefined);
        } catch (error) {
          results.push({ outcome: 'failed', error: error as EvgenError });
        }
      });
      const routes = new Map(prepared.map((p) => [p.envelope, p.route]));
      const outcomes = await handleBatchWithInbox(
        options.db,
        { ...options.inbox, consumer: name, envelopes: prepared.map((p) => p.envelope) },
        async (tx, envelope) => {
          const route = routes.get(envelope)!;
          await route.handler(upcast(envelope, route), createContext(tx, envelope));
        },
      );
      outcomes.forEach((outcome, i) => {
        results[prepared[i]!.index] =
          outcome.outcome === 'failed'
            ? { outcome: 'failed', error: outcome.error }
            : { outcome: outcome.outcome };
      });
      return results as ConsumerBatchResult[];
    },
  };

  /** Parses, validates and routes a delivery. Every failure is deterministic, so non-retryable. */
  function prepare(raw: unknown): { envelope: Envelope; route: DispatchPlan } {
    let parsed = parse(raw);
    if (!parsed.ok && parsed.error instanceof UnknownEventError) {
      const newer = readNewer(raw, parsed.error);
      if (newer !== undefined) parsed = newer;
    }
    if (!parsed.ok) {
      const { error } = parsed;
      throw error instanceof UnknownEventError
        ? new UnknownEventError(
            error.eventType,
            error.schemaVersion,
            `consumer ${name}: ${error.message}`,
          )
        : error;
    }
    return {
      envelope: parsed.envelope,
      route: plan(parsed.envelope.eventType, parsed.envelope.schemaVersion),
    };
  }

  /**
   * A subscribed event in a version newer than any the consumer knows: read with its newest
   * version's reader when the event's compatibility mode promises old readers can read new data;
   * otherwise an UnknownEventError that says why (dead-lettered, never retried).
   */
  function readNewer(raw: unknown, error: UnknownEventError): ReturnType<typeof parse> | undefined {
    const { eventType, schemaVersion } = error;
    const versions = index.versionsOf(eventType);
    const newest = versions.at(-1);
    if (schemaVersion === undefined || newest === undefined || schemaVersion <= newest) return;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return;
    const mode = index.get(eventType, newest)!.compatibility;
    if (mode === undefined || !FORWARD_READABLE.has(mode)) {
      return {
        ok: false,
        error: new UnknownEventError(
          eventType,
          schemaVersion,
          `${error.message}: newer than the versions consumer ${name} knows, and the event's compatibility mode ${mode ?? '(not declared)'} does not promise that old readers read new data (FORWARD or FULL, or their transitive forms); deploy the consumer with v${schemaVersion} first, then replay the dead letter`,
        ),
      };
    }
    return parse({ ...raw, schemaVersion: newest });
  }

  function upcast(envelope: Envelope, route: DispatchPlan): Envelope {
    let current = envelope;
    for (const step of route.steps) {
      const next = step.upcaster(current.payload, current);
      const checked = step.to.readPayload(next);
      if (!checked.ok) {
        throw new ValidationError(
          `${envelope.eventType} payload returned by upcaster ${step.key}`,
          checked.violations,
        );
      }
      current = { ...current, schemaVersion: step.to.schemaVersion, payload: checked.value };
    }
    return current;
  }

  function createContext(
    tx: Transaction,
    delivered: Envelope,
    context?: DeliveryContext,
  ): ConsumerContext {
    const key = (): AggregateVersionKey & { messageId: string } => {
      if (delivered.aggregateVersion === undefined) {
        throw new NonRetryableError(
          `${delivered.eventType} message ${delivered.messageId} carries no aggregateVersion; ordering needs one`,
        );
      }
      return {
        ...options.inbox,
        consumer: name,
        aggregateType: delivered.aggregateType,
        aggregateId: delivered.aggregateId,
        version: delivered.aggregateVersion,
        messageId: delivered.messageId,
        ...options.ordering,
      };
    };
    return {
      tx,
      consumer: name,
      delivered,
      attempt: context?.attempt ?? 1,
      delivery: context?.delivery,
      checkOrder: () => checkOrder(tx, key()),
      markApplied: () => markApplied(tx, key()),
      inOrder: (apply) => applyInOrder(tx, key(), apply),
    };
  }
}

/** Compatibility modes under which a reader of version n reads data written with a later version. */
const FORWARD_READABLE = new Set(['FORWARD', 'FORWARD_TRANSITIVE', 'FULL', 'FULL_TRANSITIVE']);

/** Refuses handler/upcaster tables that name events or versions the consumer does not subscribe to. */
function checkTables(
  name: string,
  index: DescriptorIndex,
  handlers: HandlerTable,
  upcasters: UpcasterTable,
): void {
  for (const [eventType, byVersion] of Object.entries(handlers)) {
    const known = index.versionsOf(eventType);
    if (known.length === 0)
      throw new TypeError(
        `consumer ${name}: handlers name ${eventType}, which it does not subscribe to`,
      );
    for (const version of Object.keys(byVersion ?? {})) {
      if (!known.includes(Number(version))) {
        throw new TypeError(
          `consumer ${name}: handler for unknown version ${eventType} v${version} (known: ${known.join(', ')})`,
        );
      }
    }
  }
  for (const eventType of index.eventTypes) {
    const byVersion = handlers[eventType];
    if (byVersion === undefined || Object.values(byVersion).every((h) => h === undefined)) {
      throw new TypeError(`consumer ${name}: no handler for subscribed event ${eventType}`);
    }
  }
  for (const [eventType, steps] of Object.entries(upcasters)) {
    const known = index.versionsOf(eventType);
    for (const key of Object.keys(steps ?? {})) {
      const from = /^v(\d+)ToV(\d+)$/.exec(key);
      if (
        from === null ||
        Number(from[2]) !== Number(from[1]) + 1 ||
        !known.includes(Number(from[1])) ||
        !known.includes(Number(from[2]))
      ) {
        throw new TypeError(
          `consumer ${name}: unknown upcaster ${eventType} ${key} (versions: ${known.join(', ') || 'none'})`,
        );
      }
    }
  }
}

/** Descriptors by event type and version. */
class DescriptorIndex {
  private readonly byType = new Map<string, Map<number, EventVersionDescriptor>>();

  constructor(descriptors: readonly EventVersionDescriptor[]) {
    for (const descriptor of descriptors) {
      let versions = this.byType.get(descriptor.eventType);
      if (versions === undefined)
        this.byType.set(
          descriptor.eventType,
          (versions = new Map<number, EventVersionDescriptor>()),
        );
      versions.set(descriptor.schemaVersion, descriptor);
    }
  }

  get eventTypes(): string[] {
    return [...this.byType.keys()].sort();
  }

  versionsOf(eventType: string): number[] {
    return [...(this.byType.get(eventType)?.keys() ?? [])].sort((a, b) => a - b);
  }

  get(eventType: string, version: number): EventVersionDescriptor | undefined {
    return this.byType.get(eventType)?.get(version);
  }
}
