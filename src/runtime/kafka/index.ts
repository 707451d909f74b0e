// The Kafka transport: the client interface, topic names, and publishing. The two adapters are
// entry points of their own (`evgen-runtime/kafkajs`, `evgen-runtime/platformatic-kafka`), so a
// service installs and loads only the Kafka client it uses, or none.
export * from './kafka-client.js';
export * from './topic-names.js';
export { KafkaTimeoutError } from './send-timeout.js';
export * from './kafka-record.js';
export * from './kafka-publishing.js';
export * from './kafka-topology.js';
export * from './consumer/index.js';
