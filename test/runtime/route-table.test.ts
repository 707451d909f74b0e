/**
 * Every transport looks its generated route table up the same way: own properties only, and an
 * event type the catalog has no route for is an UnknownEventError naming the transport.
 */
import { describe, expect, it } from 'vitest';
import { pulsarRouteFor, UnknownEventError } from 'evgen/runtime';
import { kafkaRouteFor } from '../../src/runtime/kafka/kafka-publishing.js';
import { routeFor } from '../../src/runtime/rabbitmq/envelope-publishing.js';

const lookups = [
  {
    transport: 'RabbitMQ',
    find: (eventType: string) =>
      routeFor(
        { 'order.OrderPlaced': { exchange: 'order', routingKey: 'order.placed' } },
        eventType,
      ),
    named: 'no RabbitMQ route',
  },
  {
    transport: 'Kafka',
    find: (eventType: string) =>
      kafkaRouteFor({ 'order.OrderPlaced': { topic: 'order.events' } }, eventType),
    named: 'no Kafka topic',
  },
  {
    transport: 'Pulsar',
    find: (eventType: string) =>
      pulsarRouteFor({ 'order.OrderPlaced': { topic: 'order.events' } }, eventType),
    named: 'no Pulsar topic',
  },
];

describe.each(lookups)('$transport route lookup', ({ find, named }) => {
  it('finds the route of a catalog event type', () => {
    expect(find('order.OrderPlaced')).toBeDefined();
  });

  it.each(['order.Unknown', 'constructor', '__proto__', 'toString'])(
    'refuses %s with an UnknownEventError naming the transport',
    (eventType) => {
      let thrown: unknown;
      try {
        find(eventType);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(UnknownEventError);
      expect((thrown as Error).message).toContain(`${named} for event type '${eventType}'`);
    },
  );
});
