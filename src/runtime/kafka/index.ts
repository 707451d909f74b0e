// The Kafka transport: the client interface with its two adapters, topic names, and publishing.
export * from './kafka-client.js';
export * from './topic-names.js';
export { kafkajsClient } from './kafkajs-client.js';
export { platformaticClient } from './platformatic-client.js';
export { KafkaTimeoutError } from './send-timeout.js';
export * from './kafka-record.js';
export * from './kafka-publishing.js';
export * from './kafka-topology.js';
export * from './consumer/index.js';
