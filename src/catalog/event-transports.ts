/**
 * Which brokers an event is published on: its optional `kafka` and `rabbitmq` blocks. Targets,
 * checks and documents of one transport work on the events that have its block and ignore the
 * others, so a Kafka-only or RabbitMQ-only catalog needs no block it does not use.
 */
import type { BrokerTransport, EventDefinition } from './model.js';

/** The broker transports an event.json can declare a block for, in a fixed order. */
export const BROKER_TRANSPORTS: readonly BrokerTransport[] = ['kafka', 'rabbitmq'];

/** The broker transports an event is published on, in BROKER_TRANSPORTS order. */
export function eventTransports(
  event: Pick<EventDefinition, BrokerTransport>,
): readonly BrokerTransport[] {
  return BROKER_TRANSPORTS.filter((transport) => event[transport] !== undefined);
}

/** An event known to have the block of `T`. */
export type EventOn<T extends BrokerTransport> = EventDefinition & {
  readonly [K in T]-?: NonNullable<EventDefinition[K]>;
};

/** The events published on `transport`, typed so that its block is known to be there. */
export function eventsOn<T extends BrokerTransport>(
  events: readonly EventDefinition[],
  transport: T,
): EventOn<T>[] {
  return events.filter((event): event is EventOn<T> => event[transport] !== undefined);
}

/** Events published on Kafka. */
export const kafkaEvents = (events: readonly EventDefinition[]) => eventsOn(events, 'kafka');

/** Events published on RabbitMQ. */
export const rabbitEvents = (events: readonly EventDefinition[]) => eventsOn(events, 'rabbitmq');
