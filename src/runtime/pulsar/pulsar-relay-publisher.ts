/**
 * The outbox relay's `Publisher` for Pulsar. A row's publish resolves only with the message id the
 * broker returns once it stored the message, so the relay marks it SENT only then. Per-aggregate
 * order is the relay's: it publishes an aggregate's rows one after the other, each after the
 * previous one was acknowledged, and the key (aggregateId) keeps them on one partition and with
 * one Key_Shared consumer.
 *
 * Failures: a dropped connection, a send the broker did not acknowledge in time and a producer
 * that cannot connect are `PulsarClientError`s with `unavailable: true`, which the relay counts as
 * an outage (the row goes back to READY with its attempts kept, never DEAD). A message the
 * WebSocket route cannot carry (over the frame limit) is an `UnpublishableMessageError`: DEAD at
 * once, since the same bytes fail the same way every time.
 */
import type { OutboundMessage, Publisher } from '../publisher.js';
import {
  publishPulsarEnvelope,
  pulsarRouteFor,
  pulsarRouteTopic,
  type PulsarProducers,
  type PulsarRoutes,
} from './pulsar-publishing.js';

export interface PulsarRelayPublisherOptions {
  /** Prepended to every topic's local name; must match the prefix the topics were created with. */
  readonly prefix?: string;
}

/**
 * Routes each row by its event type through the generated `pulsarRoutes` and sends it through
 * `producers` (one producer per topic, shared by every row of it). The row's stored headers
 * (trace context) travel as extra properties; evgen's own names cannot be overridden by them.
 */
export function pulsarRelayPublisher(
  producers: PulsarProducers,
  routes: PulsarRoutes,
  options: PulsarRelayPublisherOptions = {},
): Publisher {
  const topics = [
    ...new Set(Object.values(routes).map((r) => pulsarRouteTopic(r, options.prefix))),
  ];
  return {
    async publish(message: OutboundMessage): Promise<void> {
      const route = pulsarRouteFor(routes, message.envelope.eventType);
      await publishPulsarEnvelope(producers, message.envelope, route, {
        ...(options.prefix !== undefined ? { prefix: options.prefix } : {}),
        properties: message.headers,
      });
    },
    // The relay's reconnect probe during an outage: a producer of the first topic connected
    // again (a dropped one reconnects here) means the broker is back.
    ...(topics.length > 0
      ? {
          probe: async () => {
            const producer = await producers.producerFor(topics[0]!);
            await producer.ready?.();
          },
        }
      : {}),
  };
}
