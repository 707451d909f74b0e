/**
 * One channel a RabbitMQ runner consumes on, with the confirmed publisher its retry copies and
 * dead letters go out through. A channel does not survive its connection: once it closed
 * (`ended`) its delivery tags are void, so an ack or requeue on it is skipped (the broker
 * redelivers the delivery and the inbox absorbs it) and the runner opens a new session.
 */
import type { Channel, ChannelModel, ConsumeMessage } from 'amqplib';
import { ConfirmedPublisher } from './confirmed-publisher.js';
import type { RunnerTimers } from '../delivery/runner-timers.js';

interface AmqpSessionHooks {
  /** An error of the channel, or of an ack or requeue on it. */
  onError(error: unknown): void;
  /** The channel closed (by the broker, the connection or `close`). */
  onClosed(): void;
}

export class AmqpSession {
  readonly publisher: ConfirmedPublisher;
  /** Set while consuming; cleared by `cancel`. */
  #consumerTag: string | undefined;
  #ended = false;

  constructor(
    readonly channel: Channel,
    model: ChannelModel,
    private readonly hooks: AmqpSessionHooks,
    timers: RunnerTimers,
  ) {
    // On the runner's timers seam: its retry copies' and dead letters' confirm timeouts.
    this.publisher = new ConfirmedPublisher(model, { timers });
    channel.on('error', (error: Error) => hooks.onError(error));
    channel.on('close', () => {
      this.end();
      hooks.onClosed();
    });
  }

  /** The channel closed, or the session was given up: nothing on it counts any more. */
  get ended(): boolean {
    return this.#ended;
  }

  get consuming(): boolean {
    return !this.#ended && this.#consumerTag !== undefined;
  }

  /** Starts consuming `queue` with manual acks. */
  async consume(queue: string, onMessage: (message: ConsumeMessage | null) => void): Promise<void> {
    const reply = await this.channel.consume(queue, onMessage, { noAck: false });
    this.#consumerTag = reply.consumerTag;
  }

  /** Stops consuming: what is not delivered yet stays in the queue. */
  async cancel(): Promise<void> {
    if (!this.consuming) return;
    const tag = this.#consumerTag!;
    this.#consumerTag = undefined;
    await this.channel.cancel(tag).catch(() => undefined);
  }

  /** Gives the session up: nothing is acked on it any more; its publisher stops. */
  end(): void {
    this.#ended = true;
    void this.publisher.close();
  }

  /** Gives the session up and closes its channel (a channel already closed stays so). */
  async close(): Promise<void> {
    this.end();
    await this.publisher.close();
    await this.channel.close().catch(() => undefined);
  }

  /** Acknowledges a delivery; false when the session ended or the ack failed. */
  ack(message: ConsumeMessage): boolean {
    return this.#try(() => this.channel.ack(message));
  }

  /** Puts a delivery back in the queue untouched (same headers, so no attempt is used up). */
  requeue(message: ConsumeMessage): boolean {
    return this.#try(() => this.channel.nack(message, false, true));
  }

  #try(action: () => void): boolean {
    if (this.#ended) return false;
    try {
      action();
      return true;
    } catch (error) {
      this.hooks.onError(error);
      return false;
    }
  }
}
