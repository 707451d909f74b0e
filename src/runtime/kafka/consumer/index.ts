// The Kafka consumer side: the inbox-guarded runner with retry and dead-letter topics, and the
// dead-letter inspector/replayer.
export { createKafkaConsumerRunner } from './kafka-consumer-runner.js';
export {
  KAFKA_MESSAGE_ID_HEADER,
  type KafkaConsumerRoutes,
  type KafkaConsumerRunner,
  type KafkaConsumerRunnerEvent,
  type KafkaConsumerRunnerMetrics,
  type KafkaConsumerRunnerOptions,
  type KafkaPartitionLag,
} from './kafka-consumer-types.js';
export { kafkaConsumerRoutes, type KafkaConsumerRoutesOptions } from './consumer-routes.js';
export {
  kafkaDeadLetterDiagnostics,
  kafkaReplayHeaders,
  listKafkaDeadLetters,
  replayKafkaDeadLetters,
  type KafkaDeadLetter,
  type KafkaDeadLetterDiagnostics,
  type ListKafkaDeadLettersOptions,
  type ReplayKafkaDeadLettersOptions,
  type ReplayKafkaDeadLettersResult,
} from './kafka-dead-letters.js';
export {
  KAFKA_CONSUMER_HEADERS,
  SPRING_DLT_HEADERS,
  type KafkaHeaderValue,
} from './consumer-headers.js';
export {
  routeFailure,
  tierForFailedAttempt,
  type FailureRoute,
  type KafkaRetryTier,
} from './failure-routing.js';
