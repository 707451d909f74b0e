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
 * Its lifecycle is the runner core's (delivery/runner-core.ts), like every runner's: it runs
 * from construction (unless `autoStart: false`); `stop()` stops delivering (what is queued stays queued) and waits for the
 * handlers running, `start()` delivers again. `close()` ends it for good, dropping what waits.
 */
import type { Envelope } from '../envelope.js';
import { RetryableError } from '../errors.js';
import type { OutboundMessage, Publisher } from '../publisher.js';
import { createDeliveryPipeline, type DeliveryPipeline } from '../delivery/delivery-pipeline.js';
import type { DeliveryCounts } from '../delivery/delivery-outcome.js';
import type { DeadLetterFacts } from '../delivery/failure.js';
import {
  settleOutcome,
  type FailedOutcome,
  type OutcomeSettlement,
} from '../delivery/outcome-settlement.js';
import type { MessageHandler } from '../delivery/message-handler.js';
import { RunnerCore, type RunnerCoreEvent } from '../delivery/runner-core.js';
import type { RunnerHealth } from '../delivery/runner-health.js';
import type { RunnerState } from '../delivery/runner-lifecycle.js';
import {
  resolveInProcessBrokerOptions,
  type InProcessBrokerOptions,
  type ResolvedInProcessBrokerOptions,
} from './in-process-options.js';

/** A consumer the broker delivers to: generated inbox consumers fit (`name`, `subscribes`, `handle`). */
export interface InProcessSubscriber extends MessageHandler {
  /** Event types delivered to it. */
  readonly subscribes: readonly string[];
}

interface Subscription {
  readonly subscriber: InProcessSubscriber;
  readonly pipeline: DeliveryPipeline;
}

/** A message as it travels: the JSON body and its messageId property, like an AMQP message. */
export interface InProcessMessage {
  readonly messageId: string;
  readonly eventType: string;
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
}

export interface ConsumedRecord {
  readonly consumer: string;
  readonly messageId: string;
  readonly eventType: string;
  readonly attempt: number;
  /** What the handler resolved with: `'handled'` or `'duplicate'` for inbox consumers. */
  readonly result: unknown;
}

export interface RetriedRecord {
  readonly consumer: string;
  readonly messageId: string;
  readonly attempt: number;
  readonly delayMs: number;
  readonly errorType: string;
  readonly errorMessage: string;
}

export interface InProcessDeadLetter {
  readonly consumer: string;
  readonly message: InProcessMessage;
  readonly errorType: string;
  readonly errorMessage: string;
  readonly attempts: number;
  readonly firstFailureAt: string;
  readonly deadLetteredAt: string;
  /** Times it was replayed before this dead-lettering. */
  readonly replays: number;
}

interface QueuedDelivery {
  readonly subscriber: InProcessSubscriber;
  readonly message: InProcessMessage;
  readonly attempt: number;
  readonly firstFailureAt: string | undefined;
  readonly replays: number;
}

export class InProcessBroker {
  /** Every message accepted by `publish`, in order. */
  readonly published: InProcessMessage[] = [];
  /** Every delivery a handler resolved, in order (duplicates included, `result: 'duplicate'`). */
  readonly consumed: ConsumedRecord[] = [];
  /** Every retry scheduled after a retryable failure. */
  readonly retried: RetriedRecord[] = [];
  /** Messages given up on, with the reason. `replayDeadLetters` takes them out again. */
  readonly deadLettered: InProcessDeadLetter[] = [];

  private readonly subscribers = new Map<string, Subscription>();
  private readonly options: ResolvedInProcessBrokerOptions;
  private readonly timers = new Map<ReturnType<typeof setTimeout>, QueuedDelivery>();
  private pending = 0;
  private closed = false;
  private waiters: { ready: () => boolean; resolve: () => void }[] = [];
  /** Deliveries held while the breaker is open or the broker is stopped; pending for `settled()`. */
  private parked: QueuedDelivery[] = [];
  private readonly core: RunnerCore<RunnerCoreEvent>;
  private readonly settlement: OutcomeSettlement<QueuedDelivery>;

  constructor(given: InProcessBrokerOptions = {}) {
    const options = resolveInProcessBrokerOptions(given);
    this.options = options;
    this.core = new RunnerCore<RunnerCoreEvent>(
      {
        open: async () => this.unpark(),
        pause: () => undefined,
        resume: async () => {
          this.unpark();
          return undefined;
        },
        // Stopping: what waits for a timer waits, parked, for the next start instead.
        quiesce: async () => {
          for (const [timer, delivery] of this.timers) {
            clearTimeout(timer);
            this.pending--;
            this.park(delivery);
          }
          this.timers.clear();
        },
        close: async () => this.notify(),
      },
      options,
    );
    if (options.autoStart) void this.core.start();
    this.settlement = {
      breaker: this.core.breaker,
      counters: this.core.counters,
      // Nothing to acknowledge: a settled delivery is simply not queued again.
      settle: () => undefined,
      putBack: (delivery) => this.park(delivery),
      settleFailure: async (delivery, outcome) => this.settleFailure(delivery, outcome),
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
  }

  /** Delivers every later message of the subscriber's event types to it. One subscriber per name. */
  subscribe(subscriber: InProcessSubscriber): () => void {
    if (this.subscribers.has(subscriber.name)) {
      throw new Error(`a consumer named '${subscriber.name}' is already subscribed`);
    }
    const pipeline = createDeliveryPipeline({ ...this.options, handler: subscriber });
    this.subscribers.set(subscriber.name, { subscriber, pipeline });
    return () => {
      if (this.subscribers.get(subscriber.name)?.subscriber === subscriber) {
        this.subscribers.delete(subscriber.name);
      }
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
    if (this.closed) throw new Error('the in-process broker is closed');
    const targets = [...this.subscribers.values()]
      .map(({ subscriber }) => subscriber)
      .filter((subscriber) => subscriber.subscribes.includes(message.eventType));
    if (targets.length === 0 && this.options.unroutable === 'reject') {
      throw new RetryableError(
        `message ${message.messageId} is unroutable: no consumer subscribes to ${message.eventType} (in-process broker)`,
      );
    }
    this.published.push(message);
    for (const subscriber of targets) {
      this.enqueue({ subscriber, message, attempt: 1, firstFailureAt: undefined, replays: 0 }, 0);
    }
    this.notify();
  }

  /**
   * Sends dead letters back to their consumer (attempt count reset, same messageId); the inbox
   * skips one that was handled meanwhile. Returns how many were replayed.
   */
  replayDeadLetters(filter: (letter: InProcessDeadLetter) => boolean = () => true): number {
    const chosen = this.deadLettered.filter(filter);
    for (const letter of chosen) {
      this.deadLettered.splice(this.deadLettered.indexOf(letter), 1);
      const subscriber = this.subscribers.get(letter.consumer)?.subscriber;
      if (subscriber === undefined) {
        throw new Error(`consumer '${letter.consumer}' is not subscribed: subscribe it first`);
      }
      this.enqueue(
        {
          subscriber,
          message: letter.message,
          attempt: 1,
          firstFailureAt: undefined,
          replays: letter.replays + 1,
        },
        0,
      );
    }
    this.notify();
    return chosen.length;
  }

  /** Resolves when nothing is queued, being handled or waiting for a retry. */
  settled(): Promise<void> {
    return this.waitFor(() => this.pending === 0);
  }

  /** Resolves once `ready()` holds (checked after every change); rejects after `timeoutMs`. */
  waitFor(ready: () => boolean, timeoutMs = 30_000): Promise<void> {
    if (ready()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((waiter) => waiter !== entry);
        reject(new Error(`in-process broker: condition not reached within ${timeoutMs} ms`));
      }, timeoutMs);
      const entry = {
        ready,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      this.waiters.push(entry);
    });
  }

  get state(): RunnerState {
    return this.core.state;
  }

  /** Readiness as data: running and the breaker closed (see `createHealthEndpoints`). */
  health(): Promise<RunnerHealth> {
    return this.core.health('in-process');
  }

  /** Handlers running now. */
  get inFlight(): number {
    return this.core.inFlight.size;
  }

  /** Delivers again after `stop()`, what was queued first. */
  start(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the in-process broker is closed'));
    return this.core.start();
  }

  /**
   * Stops delivering: what is queued (retries included) stays queued for the next `start()`;
   * resolves once the handlers running have finished and their outcome is settled.
   */
  stop(): Promise<void> {
    return this.core.stop();
  }

  /** Stops delivering for good: scheduled retries are dropped, handlers already running finish. */
  close(): void {
    this.closed = true;
    void this.core.stop();
    for (const timer of this.timers.keys()) clearTimeout(timer);
    this.pending -= this.timers.size + this.parked.length;
    this.timers.clear();
    this.parked = [];
    this.notify();
  }

  /** The breaker closed or the broker started: parked deliveries go again. */
  private unpark(): void {
    const parked = this.parked;
    this.parked = [];
    for (const delivery of parked) {
      this.pending--;
      this.enqueue(delivery, 0);
    }
    this.notify();
  }

  private enqueue(delivery: QueuedDelivery, delayMs: number): void {
    this.pending++;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      void this.core.track(this.deliver(delivery)).finally(() => {
        this.pending--;
        this.notify();
      });
    }, delayMs);
    this.timers.set(timer, delivery);
  }

  private async deliver(delivery: QueuedDelivery): Promise<void> {
    const { subscriber, message, attempt } = delivery;
    const pipeline = this.subscribers.get(subscriber.name)?.pipeline;
    // Unsubscribed meanwhile: like a deleted queue, its messages are gone.
    if (pipeline === undefined) return;
    if (this.core.breaker.isOpen || this.core.state !== 'running') {
      this.park(delivery);
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
    await settleOutcome(outcome, delivery, this.settlement);
  }

  /** Retry after the next delay (a dead letter once the broker closed), or the dead letter. */
  private settleFailure(delivery: QueuedDelivery, outcome: FailedOutcome): void {
    const { subscriber, attempt } = delivery;
    if (outcome.kind === 'dead-letter' || this.closed) {
      this.core.counters.deadLettered++;
      this.deadLetter(delivery, outcome.letter);
      return;
    }
    const delays = this.options.retryDelaysMs;
    const delayMs = delays[Math.min(attempt, delays.length) - 1] ?? 0;
    this.core.counters.settled(outcome);
    this.retried.push({
      consumer: subscriber.name,
      messageId: outcome.messageId,
      attempt,
      delayMs,
      errorType: outcome.failure.errorType,
      errorMessage: outcome.failure.message,
    });
    this.enqueue(
      {
        ...delivery,
        attempt: attempt + 1,
        firstFailureAt: delivery.firstFailureAt ?? outcome.failure.at.toISOString(),
      },
      delayMs,
    );
  }

  /** Counts of every delivery settled so far, in the runners' vocabulary, and breaker trips. */
  metrics(): DeliveryCounts & { readonly pauses: number } {
    return { ...this.core.counters.snapshot(), pauses: this.core.breaker.trips };
  }

  /** Holds a delivery until the breaker closes; it stays pending for `settled()`. */
  private park(delivery: QueuedDelivery): void {
    if (this.closed) return;
    this.pending++;
    this.parked.push(delivery);
  }

  private deadLetter(delivery: QueuedDelivery, letter: DeadLetterFacts): void {
    const now = letter.failure.at.toISOString();
    this.deadLettered.push({
      consumer: delivery.subscriber.name,
      message: delivery.message,
      errorType: letter.failure.errorType,
      errorMessage: letter.failure.message,
      attempts: letter.attempts,
      firstFailureAt: delivery.firstFailureAt ?? now,
      deadLetteredAt: now,
      replays: delivery.replays,
    });
  }

  private notify(): void {
    const ready = this.waiters.filter((waiter) => waiter.ready());
    this.waiters = this.waiters.filter((waiter) => !ready.includes(waiter));
    for (const waiter of ready) waiter.resolve();
  }
}
