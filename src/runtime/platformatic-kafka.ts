// `evgen-runtime/platformatic-kafka`: evgen's Kafka client interface over @platformatic/kafka
// (install @platformatic/kafka to use it).
export { platformaticClient } from './kafka/platformatic-client.js';
