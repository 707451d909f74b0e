// The Kafka transport: the client interface with its two adapters, topic names, and publishing.
export * from './kafka-client.js';
export * from './topic-names.js';
