/**
 * Which brokers an event is published on: its optional `kafka`, `rabbitmq` and `pulsar` blocks. Targets,
 * checks and documents of one transport work on the events that have its block and ignore the
 * others, so a Kafka-only or RabbitMQ-only catalog needs no block it does not use.
 */
import {
  DEFAULT_PULSAR_NAMESPACE,
  DEFAULT_PULSAR_TENANT,
  type BrokerTransport,
  type EventDefinition,
  type PulsarEventTopic,
} from './model.js';

/** The broker transports an event.json can declare a block for, in a fixed order. */
export const BROKER_TRANSPORTS: readonly BrokerTransport[] = ['kafka', 'rabbitmq', 'pulsar'];

/** How messages and docs name each transport. */
export const TRANSPORT_LABELS: Readonly<Record<BrokerTransport, string>> = {
  kafka: 'Kafka',
  rabbitmq: 'RabbitMQ',
  pulsar: 'Pulsar',
};

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

/** Events published on Pulsar. */
export const pulsarEvents = (events: readonly EventDefinition[]) => eventsOn(events, 'pulsar');

/** The full name of an event's Pulsar topic, `persistent://<tenant>/<namespace>/<topic>` (before the deployment prefix). */
export function pulsarTopicName(topic: PulsarEventTopic): string {
  return `persistent://${topic.tenant ?? DEFAULT_PULSAR_TENANT}/${topic.namespace ?? DEFAULT_PULSAR_NAMESPACE}/${topic.topic}`;
}
