/**
 * The seam between the outbox relay and a broker. Each transport (RabbitMQ, Kafka) implements
 * `Publisher`; tests may use a recording one.
 */
import type { Envelope } from './envelope.js';

/** One outbox row on its way to the broker. */
export interface OutboundMessage {
  /** The outbox row id (identity column), as a decimal string. */
  readonly outboxId: string;
  readonly envelope: Envelope;
  /** Extra transport headers stored with the row (trace context and the like). */
  readonly headers: Readonly<Record<string, string>>;
  /** Publish attempts made before this one. */
  readonly attempts: number;
}

export interface Publisher {
  /**
   * Resolves only once the broker has durably accepted the message (confirmed, and for
   * RabbitMQ not returned as unroutable). Rejects otherwise; the relay then retries later.
   */
  publish(message: OutboundMessage): Promise<void>;
  /**
   * Optional: resolves once the publisher holds a working connection to the broker, opening one
   * if it has none (it may wait as long as reconnecting takes; the relay bounds each call).
   * During a broker outage the relay calls it to notice the broker's return: a probe that did not
   * answer at first and then resolves is a reconnect, and ends the relay's backoff at once.
   */
  probe?(): Promise<void>;
  /**
   * Optional: publishes several messages of ONE aggregate, given in their order, together (in
   * one request where the broker allows). Resolves once every one settled, with one result per
   * message, in the same order. What the broker stored must be a prefix of the list: once a
   * message fails, the ones after it must fail too and must not be stored. Kafka's publisher
   * keeps this by sending them in one record batch, which a partition appends whole or not at
   * all. Without it the relay publishes an aggregate's next row only after the previous one was
   * confirmed.
   */
  publishChain?(messages: readonly OutboundMessage[]): Promise<readonly ChainPublishResult[]>;
}

/** One message's outcome in `publishChain`: stored, or the reason it was not. */
export type ChainPublishResult =
  { readonly stored: true } | { readonly stored: false; readonly error: unknown };
