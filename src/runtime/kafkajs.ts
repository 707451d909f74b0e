// `evgen-runtime/kafkajs`: evgen's Kafka client interface over kafkajs (install kafkajs to use it).
export { kafkajsClient } from './kafka/kafkajs-client.js';
