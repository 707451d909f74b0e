/**
 * A broker inside the process: the outbox relay publishes to it and inbox-guarded consumers
 * subscribe to it, with the RabbitMQ runner's rules — every subscriber of an event type gets its
 * own copy; a retryable failure is tried again after the next delay (same body and messageId,
 * attempt + 1); a non-retryable failure, the last attempt or a malformed message becomes a dead
 * letter with its diagnostics; nothing is lost or retried forever. It needs no server, so a
 * newcomer can run producer → relay → consumer on PGlite, and handler tests can assert on what
 * was published, consumed, retried and dead-lettered (the lists below) after `settled()`.
 *
 * It is not durable: what is queued lives in memory only. The outbox row (SENT only after
 * `publish` resolved) and the inbox row are the durable parts, as with a real broker.
 *
 * Its lifecycle, work in flight, breaker and counts are the runner core's
 * (delivery/runner-core.ts), like every runner's; its own state is only the queue
 * (delivery-queue.ts) and the records. It runs from construction (unless `autoStart: false`);
 * `stop()` stops delivering (what is queued stays queued) and waits for the handlers running,
 * `start()` delivers again. `close()` ends it for good, dropping what waits.
 */
import type { Envelope } from '../envelope.js';
import { RetryableError } from '../errors.js';
import type { OutboundMessage, Publisher } from '../publisher.js';
import { createDeliveryPipeline, type DeliveryPipeline } from '../delivery/delivery-pipeline.js';
import type { DeliveryCounts } from '../delivery/delivery-outcome.js';
import {
  settleOutcome,
  type FailedOutcome,
  type OutcomeSettlement,
} from '../delivery/outcome-settlement.js';
import { RunnerCore, type RunnerCoreEvent } from '../delivery/runner-core.js';
import type { RunnerHealth } from '../delivery/runner-health.js';
import type { RunnerState } from '../delivery/runner-lifecycle.js';
import { ConditionWaiters } from './condition-waiters.js';
import { DeliveryQueue } from './delivery-queue.js';
import {
  deadLetterOf,
  type ConsumedRecord,
  type InProcessDeadLetter,
  type InProcessMessage,
  type InProcessSubscriber,
  type QueuedDelivery,
  type RetriedRecord,
} from './in-process-records.js';
import {
  resolveInProcessBrokerOptions,
  type InProcessBrokerOptions,
  type ResolvedInProcessBrokerOptions,
} from './in-process-options.js';

export class InProcessBroker {
  /** Every message accepted by `publish`, in order. */
  readonly published: InProcessMessage[] = [];
  /** Every delivery a handler resolved, in order (duplicates included, `result: 'duplicate'`). */
  readonly consumed: ConsumedRecord[] = [];
  /** Every retry scheduled after a retryable failure. */
  readonly retried: RetriedRecord[] = [];
  /** Messages given up on, with the reason. `replayDeadLetters` takes them out again. */
  readonly deadLettered: InProcessDeadLetter[] = [];

  readonly #pipelines = new Map<string, DeliveryPipeline>();
  readonly #subscribers = new Map<string, InProcessSubscriber>();
  readonly #options: ResolvedInProcessBrokerOptions;
  readonly #queue: DeliveryQueue<QueuedDelivery>;
  readonly #waiters = new ConditionWaiters();
  readonly #core: RunnerCore<RunnerCoreEvent>;
  readonly #settlement: OutcomeSettlement<QueuedDelivery>;
  /** `close()` was called: a terminal flag beside the core's lifecycle, which can restart. */
  #closed = false;

  constructor(given: InProcessBrokerOptions = {}) {
    const options = resolveInProcessBrokerOptions(given);
    this.#options = options;
    this.#queue = new DeliveryQueue((delivery) => this.#run(delivery), options.timers);
    const release = () => {
      this.#queue.release();
      this.#waiters.notify();
    };
    this.#core = new RunnerCore<RunnerCoreEvent>(
      {
        open: async () => release(),
        pause: () => undefined,
        resume: async () => {
          release();
          return undefined;
        },
        // Stopping: what waits for a delay waits, parked, for the next start instead.
        quiesce: async () => this.#queue.hold(),
        close: async () => this.#waiters.notify(),
      },
      options,
    );
    this.#settlement = {
      breaker: this.#core.breaker,
      counters: this.#core.counters,
      // Nothing to acknowledge: a settled delivery is simply not queued again.
      settle: () => undefined,
      putBack: (delivery) => this.#park(delivery),
      settleFailure: async (delivery, outcome) => this.#settleFailure(delivery, outcome),
      handled: ({ subscriber, message, attempt }, outcome) => {
        this.consumed.push({
          consumer: subscriber.name,
          messageId: outcome.messageId,
          eventType: message.eventType,
          attempt,
          result: outcome.result,
        });
      },
    };
    if (options.autoStart) void this.#core.start();
  }

  /** Delivers every later message of the subscriber's event types to it. One subscriber per name. */
  subscribe(subscriber: InProcessSubscriber): () => void {
    const { name } = subscriber;
    if (this.#subscribers.has(name))
      throw new Error(`a consumer named '${name}' is already subscribed`);
    this.#subscribers.set(name, subscriber);
    this.#pipelines.set(name, createDeliveryPipeline({ ...this.#options, handler: subscriber }));
    return () => {
      if (this.#subscribers.get(name) !== subscriber) return;
      this.#subscribers.delete(name);
      this.#pipelines.delete(name);
    };
  }

  /** The outbox relay's `Publisher`: `createOutboxRelay({ db, publisher: broker.relayPublisher() })`. */
  relayPublisher(): Publisher {
    return {
      publish: (message: OutboundMessage) => this.publish(message.envelope, message.headers),
    };
  }

  /**
   * Publishes an envelope: resolves once every subscriber has it queued (like a confirmed and
   * routed RabbitMQ publish); handling happens afterwards.
   */
  async publish(envelope: Envelope, headers: Readonly<Record<string, string>> = {}): Promise<void> {
    this.publishRaw({
      messageId: envelope.messageId,
      eventType: envelope.eventType,
      body: JSON.stringify(envelope),
      headers: { ...headers },
    });
  }

  /**
   * Publishes a message as a producer that is not evgen might: any body, a messageId property
   * that may be empty (then the body's own messageId is taken, as the RabbitMQ runner does).
   */
  publishRaw(message: InProcessMessage): void {
    if (this.#closed) throw new Error('the in-process broker is closed');
    const targets = [...this.#subscribers.values()].filter((subscriber) =>
      subscriber.subscribes.includes(message.eventType),
    );
    if (targets.length === 0 && this.#options.unroutable === 'reject') {
      throw new RetryableError(
        `message ${message.messageId} is unroutable: no consumer subscribes to ${message.eventType} (in-process broker)`,
      );
    }
    this.published.push(message);
    for (const subscriber of targets)
      this.#queue.schedule(
        { subscriber, message, attempt: 1, firstFailureAt: undefined, replays: 0 },
        0,
      );
    this.#waiters.notify();
  }

  /**
   * Sends dead letters back to their consumer (attempt count reset, same messageId); the inbox
   * skips one that was handled meanwhile. Returns how many were replayed.
   */
  replayDeadLetters(filter: (letter: InProcessDeadLetter) => boolean = () => true): number {
    const chosen = this.deadLettered.filter(filter);
    for (const letter of chosen) {
      this.deadLettered.splice(this.deadLettered.indexOf(letter), 1);
      const subscriber = this.#subscribers.get(letter.consumer);
      if (subscriber === undefined) {
        throw new Error(`consumer '${letter.consumer}' is not subscribed: subscribe it first`);
      }
      const replays = letter.replays + 1;
      this.#queue.schedule(
        { subscriber, message: letter.message, attempt: 1, firstFailureAt: undefined, replays },
        0,
      );
    }
    this.#waiters.notify();
    return chosen.length;
  }

  /** Resolves when nothing is queued, being handled or waiting for a retry. */
  settled(): Promise<void> {
    return this.waitFor(() => this.#queue.size + this.#core.inFlight.size === 0);
  }

  /** Resolves once `ready()` holds (checked after every change); rejects after `timeoutMs`. */
  waitFor(ready: () => boolean, timeoutMs = 30_000): Promise<void> {
    const message = `in-process broker: condition not reached within ${timeoutMs} ms`;
    return this.#waiters.waitFor(ready, timeoutMs, message);
  }

  get state(): RunnerState {
    return this.#core.state;
  }

  /** Readiness as data: running and the breaker closed (see `createHealthEndpoints`). */
  health(): Promise<RunnerHealth> {
    return this.#core.health('in-process');
  }

  /** Handlers running now. */
  get inFlight(): number {
    return this.#core.inFlight.size;
  }

  /** Delivers again after `stop()`, what was queued first. */
  start(): Promise<void> {
    if (this.#closed) return Promise.reject(new Error('the in-process broker is closed'));
    return this.#core.start();
  }

  /**
   * Stops delivering: what is queued (retries included) stays queued for the next `start()`;
   * resolves once the handlers running have finished and their outcome is settled.
   */
  stop(): Promise<void> {
    return this.#core.stop();
  }

  /** Stops delivering for good: scheduled retries are dropped, handlers already running finish. */
  close(): void {
    this.#closed = true;
    void this.#core.stop();
    this.#queue.clear();
    this.#waiters.notify();
  }

  /** Counts of every delivery settled so far, in the runners' vocabulary, and breaker trips. */
  metrics(): DeliveryCounts & { readonly pauses: number } {
    return { ...this.#core.counters.snapshot(), pauses: this.#core.breaker.trips };
  }

  /** A delivery whose delay has passed: handled as the core's in-flight work. */
  #run(delivery: QueuedDelivery): void {
    void this.#core.track(this.#deliver(delivery)).finally(() => this.#waiters.notify());
  }

  async #deliver(delivery: QueuedDelivery): Promise<void> {
    const { subscriber, message, attempt } = delivery;
    const pipeline = this.#pipelines.get(subscriber.name);
    // Unsubscribed meanwhile: like a deleted queue, its messages are gone.
    if (pipeline === undefined) return;
    if (this.#core.breaker.isOpen || this.#core.state !== 'running') {
      this.#park(delivery);
      return;
    }
    const outcome = await pipeline.process({
      body: Buffer.from(message.body, 'utf8'),
      ...(message.messageId !== '' ? { messageId: message.messageId } : {}),
      eventType: message.eventType,
      ...(message.headers.traceId !== undefined ? { traceId: message.headers.traceId } : {}),
      attempt,
      facts: {
        transport: 'in-process',
        queue: subscriber.name,
        redelivered: attempt > 1 || delivery.replays > 0,
        headers: message.headers,
      },
    });
    await settleOutcome(outcome, delivery, this.#settlement);
  }

  /** Retry after the next delay (a dead letter once the broker closed), or the dead letter. */
  #settleFailure(delivery: QueuedDelivery, outcome: FailedOutcome): void {
    const { subscriber, attempt } = delivery;
    if (outcome.kind === 'dead-letter' || this.#closed) {
      this.#core.counters.deadLettered++;
      this.deadLettered.push(deadLetterOf(delivery, outcome.letter));
      return;
    }
    const delays = this.#options.retryDelaysMs;
    const delayMs = delays[Math.min(attempt, delays.length) - 1] ?? 0;
    this.#core.counters.settled(outcome);
    this.retried.push({
      consumer: subscriber.name,
      messageId: outcome.messageId,
      attempt,
      delayMs,
      errorType: outcome.failure.errorType,
      errorMessage: outcome.failure.message,
    });
    const firstFailureAt = delivery.firstFailureAt ?? outcome.failure.at.toISOString();
    this.#queue.schedule({ ...delivery, attempt: attempt + 1, firstFailureAt }, delayMs);
  }

  /** Holds a delivery until the broker starts again or its breaker closes (none once closed). */
  #park(delivery: QueuedDelivery): void {
    if (!this.#closed) this.#queue.park(delivery);
  }
}
