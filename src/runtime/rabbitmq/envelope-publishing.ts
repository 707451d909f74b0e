/**
 * Publishing envelopes to the exchange and routing key the catalog gives their event type.
 * Generated helpers (`publishOrderCreated`) and the outbox relay both end here, so no call site
 * spells an exchange or routing key.
 */
import type { Envelope } from '../envelope.js';
import { lookupRoute } from '../route-table.js';
import type { OutboundMessage, Publisher } from '../publisher.js';
import { amqpViolations, UnpublishableMessageError } from '../transport-limits.js';
import { envelopeToAmqpMessage } from './amqp-message.js';
import type { ConfirmedPublisher } from './confirmed-publisher.js';
import type { RabbitRoute, RabbitRoutes } from './topology.js';
import { DestinationPresence } from '../destination-presence.js';
import { RabbitExchangeMissingError } from './errors.js';

export interface PublishEnvelopeOptions {
  /** Prepended to the exchange name; must match the prefix the topology was asserted with. */
  readonly prefix?: string;
  /** Extra headers (trace context and the like); evgen's `x-evgen-*` headers cannot be overridden. */
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * Publishes one envelope on its route and resolves when the broker confirmed and routed it.
 * A message RabbitMQ cannot carry (see transport-limits.ts) rejects with
 * `UnpublishableMessageError` before anything is sent.
 */
export async function publishEnvelope(
  publisher: ConfirmedPublisher,
  envelope: Envelope,
  route: RabbitRoute,
  options: PublishEnvelopeOptions = {},
): Promise<void> {
  const message = envelopeToAmqpMessage(envelope, options.headers);
  const { properties, content } = message;
  const violations = amqpViolations(
    {
      messageId: properties.messageId,
      type: envelope.eventType,
      ...(envelope.correlationId !== undefined ? { correlationId: envelope.correlationId } : {}),
    },
    properties.headers as Record<string, string | number>,
    { atMost: content.length, exact: () => content.length },
  );
  if (violations.length > 0) throw new UnpublishableMessageError(envelope.messageId, violations);
  return publisher.publish(
    (options.prefix ?? '') + route.exchange,
    route.routingKey,
    message.content,
    message.properties,
  );
}

/** Looks an event type up in the route table; an unknown type is a programming error, never retried. */
export function routeFor(routes: RabbitRoutes, eventType: string): RabbitRoute {
  return lookupRoute(routes, eventType, 'RabbitMQ route');
}

/**
 * The outbox relay's `Publisher` for RabbitMQ: routes by event type through the generated route
 * table and resolves only on a confirmed, routed publish. The row's stored headers travel along.
 */
export function rabbitRelayPublisher(
  publisher: ConfirmedPublisher,
  routes: RabbitRoutes,
  options: { readonly prefix?: string } = {},
): Publisher {
  // A missing exchange fails its own messages, not the channel every other one is on.
  const presence = new DestinationPresence(
    (exchange) => publisher.exchangeExists(exchange),
    (exchange) => new RabbitExchangeMissingError(exchange),
  );
  return {
    async publish(message: OutboundMessage): Promise<void> {
      const route = routeFor(routes, message.envelope.eventType);
      const present = presence.require((options.prefix ?? '') + route.exchange);
      if (present !== true) await present;
      return publishEnvelope(publisher, message.envelope, route, {
        prefix: options.prefix,
        headers: message.headers,
      });
    },
    probe: () => publisher.ready(),
  };
}
