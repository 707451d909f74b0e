/**
 * Publishing that resolves only when the broker took responsibility for the message: confirmed
 * (basic.ack) AND not returned as unroutable. amqplib acks a returned `mandatory` message like
 * any other, so returns are matched to their pending publish by messageId (the broker sends the
 * return before the ack) and turn that publish into an UnroutableError. A nack, or a channel /
 * connection that closes first, fails every pending publish. When the socket buffer is full
 * (`publish` returned false) later publishes wait for `drain`. Every publish is bounded by
 * `confirmTimeoutMs` (opening the channel, waiting for drain and the confirm itself): past it the
 * publish rejects with PublishTimeoutError and whatever the broker says about it later is ignored.
 */
import type { ChannelOptions, ConfirmChannel, Message } from 'amqplib';
import { currentConnection, type ConnectionSource } from './connector.js';
import { REAL_RUNNER_TIMERS, type RunnerTimers } from '../delivery/runner-timers.js';
import { waitAtMost } from '../sleep.js';
import type { PublishProperties } from './amqp-message.js';
import { UnpublishableMessageError } from '../transport-limits.js';
import {
  ChannelClosedError,
  PublishNackedError,
  PublishTimeoutError,
  UnroutableError,
} from './errors.js';

interface PendingPublish {
  readonly messageId: string;
  readonly exchange: string;
  readonly routingKey: string;
  returned?: { replyCode: number; replyText: string };
  /**
   * The caller was already told it timed out. Kept until the broker answers (or the channel
   * closes) so that answer, a return in particular, is matched to it and not to a later publish
   * of the same message.
   */
  timedOut?: boolean;
}

/** One publish() call: whether its deadline passed, and its pending entry once written. */
interface PublishAttempt {
  expired: boolean;
  entry?: PendingPublish;
}

export interface ConfirmedPublisherOptions {
  /** `highWaterMark`: how many frames amqplib buffers per channel before `publish` reports back-pressure. */
  readonly channelOptions?: ChannelOptions;
  /**
   * Longest a publish may take, from the call to the broker's confirm (default 30 000 ms). Past
   * it the publish rejects with PublishTimeoutError (retryable). With the outbox relay, keep it
   * below the relay's publishTimeoutMs so the transport's error is the one recorded.
   */
  readonly confirmTimeoutMs?: number;
  /**
   * Timers the confirm timeouts and close's wait run on (a runner passes its `timers` seam, so a
   * test can drive them). Default: the process's.
   */
  readonly timers?: RunnerTimers;
}

// Bounds publishes made outside the relay (and the consumer runner's retry copies). Under the relay,
// whichever fires first counts as broker unavailability, so either way no attempt is used up.
const DEFAULT_CONFIRM_TIMEOUT_MS = 10_000;

/** Outcomes of publishes since the publisher was created (for metrics). */
export interface ConfirmedPublisherStats {
  /** Confirmed and routed. */
  readonly confirmed: number;
  /** Confirmed but returned as unroutable (UnroutableError). */
  readonly returned: number;
  /** Refused by the broker (PublishNackedError). */
  readonly nacked: number;
  /** Channel or connection gone before the confirm (ChannelClosedError). */
  readonly closed: number;
  /** Not confirmed within confirmTimeoutMs (PublishTimeoutError). */
  readonly timedOut: number;
}

/** Where the publisher gets its connection: a fixed one, or a connector that reconnects. */
export type { ConnectionSource };

export class ConfirmedPublisher {
  private channel: ConfirmChannel | undefined;
  private opening: Promise<ConfirmChannel> | undefined;
  private readonly pending = new Map<string, PendingPublish[]>();
  private drained: Promise<void> | undefined;
  private closing = false;
  private drainWaitCount = 0;
  private readonly counts = { confirmed: 0, returned: 0, nacked: 0, closed: 0, timedOut: 0 };
  private readonly confirmTimeoutMs: number;
  private readonly timers: RunnerTimers;

  /**
   * Opens lazily: the confirm channel is created on the first publish and re-created after it
   * closed (on the connector's current connection).
   */
  constructor(
    private readonly source: ConnectionSource,
    private readonly options: ConfirmedPublisherOptions = {},
  ) {
    const timeout = options.confirmTimeoutMs ?? DEFAULT_CONFIRM_TIMEOUT_MS;
    if (!Number.isFinite(timeout) || timeout <= 0)
      throw new RangeError(`confirmTimeoutMs must be a positive number, got ${timeout}`);
    this.confirmTimeoutMs = timeout;
    this.timers = options.timers ?? REAL_RUNNER_TIMERS;
  }

  /** How often publishing had to wait for the channel to drain (back-pressure). */
  get drainWaits(): number {
    return this.drainWaitCount;
  }

  /** Confirm outcomes so far: feed them to a metrics system (confirm failures, unroutable messages). */
  get stats(): ConfirmedPublisherStats {
    return { ...this.counts };
  }

  /** Number of publishes waiting for their confirm. */
  get inFlight(): number {
    let count = 0;
    for (const list of this.pending.values())
      count += list.filter((entry) => !entry.timedOut).length;
    return count;
  }

  /**
   * Resolves once a confirm channel is open, reconnecting (through the connector) if the
   * connection was lost; rejects after close(). The outbox relay probes with it during an outage.
   */
  async ready(): Promise<void> {
    await this.confirmChannel();
  }

  /**
   * Whether the broker has `exchange`: a passive declare on a channel of its own, closed after
   * (a missing exchange closes the channel it is asked on, so never the publishing one). The
   * default exchange (`''`) always exists. Rejects when the broker cannot be asked.
   */
  async exchangeExists(exchange: string): Promise<boolean> {
    if (exchange === '') return true;
    const model = await currentConnection(this.source);
    const channel = await model.createChannel();
    channel.on('error', () => undefined);
    try {
      await channel.checkExchange(exchange);
      return true;
    } catch (error) {
      if ((error as { code?: unknown }).code === 404) return false;
      throw error;
    } finally {
      await channel.close().catch(() => undefined);
    }
  }

  /**
   * Publishes persistently with `mandatory`; resolves once confirmed and not returned. Rejects
   * with UnroutableError, PublishNackedError, ChannelClosedError or PublishTimeoutError (all
   * retryable), or UnpublishableMessageError when amqplib cannot encode the message (never).
   */
  async publish(
    exchange: string,
    routingKey: string,
    content: Buffer,
    properties: PublishProperties,
  ): Promise<void> {
    const messageId = properties.messageId;
    if (typeof messageId !== 'string' || messageId === '') {
      throw new TypeError(
        'ConfirmedPublisher.publish needs a messageId: returns are matched by it',
      );
    }
    const attempt: PublishAttempt = { expired: false };
    let timer: unknown;
    const deadline = new Promise<never>((_, reject) => {
      timer = this.timers.setTimeout(() => {
        attempt.expired = true;
        if (attempt.entry !== undefined) attempt.entry.timedOut = true;
        this.counts.timedOut++;
        reject(new PublishTimeoutError(messageId, exchange, routingKey, this.confirmTimeoutMs));
      }, this.confirmTimeoutMs);
    });
    try {
      // The send goes on after a timeout only to drop the message unsent or to ignore its confirm.
      await Promise.race([
        this.send(attempt, exchange, routingKey, content, { ...properties, messageId }),
        deadline,
      ]);
    } finally {
      this.timers.clearTimeout(timer);
    }
  }

  private async send(
    attempt: PublishAttempt,
    exchange: string,
    routingKey: string,
    content: Buffer,
    properties: PublishProperties & { readonly messageId: string },
  ): Promise<void> {
    // Failures after the deadline were already reported as a timeout: not counted twice.
    const count = (outcome: 'confirmed' | 'returned' | 'nacked' | 'closed') => {
      if (!attempt.expired) this.counts[outcome]++;
    };
    const channel = await this.confirmChannel().catch((error: unknown) => {
      count('closed');
      throw error;
    });
    while (this.drained !== undefined && !attempt.expired) await this.drained;
    // Too late: the caller was told it failed, so it must not go out now.
    if (attempt.expired) return;
    if (channel !== this.channel) {
      count('closed');
      throw new ChannelClosedError(
        `channel closed before message ${properties.messageId} was sent`,
      );
    }
    const entry: PendingPublish = { messageId: properties.messageId, exchange, routingKey };
    attempt.entry = entry;
    const list = this.pending.get(entry.messageId) ?? [];
    list.push(entry);
    this.pending.set(entry.messageId, list);
    return new Promise<void>((resolve, reject) => {
      const settle = (error: unknown) => {
        this.forget(entry);
        // A late answer for a publish that timed out: its caller has moved on.
        if (entry.timedOut) return;
        if (error) {
          const nacked = error instanceof Error && error.message === 'message nacked';
          count(nacked ? 'nacked' : 'closed');
          reject(
            nacked
              ? new PublishNackedError(entry.messageId, exchange, routingKey)
              : new ChannelClosedError(
                  `channel closed before the broker confirmed message ${entry.messageId}`,
                  { cause: error },
                ),
          );
        } else if (entry.returned !== undefined) {
          count('returned');
          reject(
            new UnroutableError(
              entry.messageId,
              exchange,
              routingKey,
              entry.returned.replyCode,
              entry.returned.replyText,
            ),
          );
        } else {
          count('confirmed');
          resolve();
        }
      };
      let writable: boolean;
      try {
        writable = channel.publish(
          exchange,
          routingKey,
          content,
          { ...properties, persistent: true, mandatory: true },
          settle,
        );
      } catch (error) {
        this.forget(entry);
        // amqplib checks the properties and encodes the header table before it sends or
        // registers anything: a TypeError or RangeError there is this message's fault (a short
        // string over 255 bytes, a header table over its buffer) and the channel stays usable.
        if (error instanceof TypeError || error instanceof RangeError) {
          reject(
            new UnpublishableMessageError(
              entry.messageId,
              [
                {
                  pointer: '',
                  keyword: 'encoding',
                  message: `amqplib cannot encode it: ${error.message}`,
                },
              ],
              { cause: error },
            ),
          );
          return;
        }
        // Otherwise amqplib threw because the channel already closed.
        count('closed');
        reject(
          new ChannelClosedError(`cannot publish message ${entry.messageId}: channel is closed`, {
            cause: error,
          }),
        );
        return;
      }
      if (!writable) this.waitForDrain(channel);
    });
  }

  /**
   * Waits for pending confirms (at most confirmTimeoutMs), then closes the channel (never the
   * connection, which the caller owns).
   */
  async close(): Promise<void> {
    this.closing = true;
    const channel = this.channel;
    this.channel = undefined;
    if (channel !== undefined) {
      await waitAtMost(
        channel.waitForConfirms().catch(() => undefined),
        this.confirmTimeoutMs,
        this.timers,
      );
      await channel.close().catch(() => undefined);
    }
  }

  private forget(entry: PendingPublish): void {
    const list = this.pending.get(entry.messageId);
    if (list === undefined) return;
    const index = list.indexOf(entry);
    if (index >= 0) list.splice(index, 1);
    if (list.length === 0) this.pending.delete(entry.messageId);
  }

  private waitForDrain(channel: ConfirmChannel): void {
    if (this.drained !== undefined) return;
    this.drainWaitCount++;
    this.drained = new Promise<void>((resolve) => {
      const done = () => {
        channel.removeListener('drain', done);
        channel.removeListener('close', done);
        this.drained = undefined;
        resolve();
      };
      channel.on('drain', done);
      channel.on('close', done);
    });
  }

  private onReturn(message: Message): void {
    const messageId = message.properties.messageId as unknown;
    if (typeof messageId !== 'string') return;
    // The return precedes the ack of the same publish, so the earliest not-yet-returned entry with
    // the same id, exchange and routing key is it (the same id may be in flight to other routes,
    // and a persistent message's ack can come after a later message's return).
    const fields = message.fields as unknown as {
      replyCode: number;
      replyText: string;
      exchange: string;
      routingKey: string;
    };
    const entry = this.pending
      .get(messageId)
      ?.find(
        (candidate) =>
          candidate.returned === undefined &&
          candidate.exchange === fields.exchange &&
          candidate.routingKey === fields.routingKey,
      );
    if (entry !== undefined) {
      entry.returned = { replyCode: fields.replyCode, replyText: fields.replyText };
    }
  }

  private async confirmChannel(): Promise<ConfirmChannel> {
    if (this.closing) throw new ChannelClosedError('publisher is closed');
    if (this.channel !== undefined) return this.channel;
    this.opening ??= (async () => {
      try {
        const model = await currentConnection(this.source);
        const channel = await model.createConfirmChannel(this.options.channelOptions);
        // Without a listener an 'error' event would throw; the close handler below does the work.
        channel.on('error', () => undefined);
        channel.on('return', (message: Message) => this.onReturn(message));
        channel.on('close', () => {
          // amqplib has already failed this channel's unconfirmed callbacks; just stop using it.
          if (this.channel === channel) this.channel = undefined;
        });
        this.channel = channel;
        return channel;
      } catch (error) {
        throw new ChannelClosedError(`cannot open a confirm channel: ${(error as Error).message}`, {
          cause: error,
        });
      } finally {
        this.opening = undefined;
      }
    })();
    return this.opening;
  }
}
