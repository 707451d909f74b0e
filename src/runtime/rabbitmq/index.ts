// The RabbitMQ transport: topology, confirmed publishing, the relay publisher and the consumer runner.
export * from './topology.js';
export {
  assertTopology,
  deleteResolvedTopology,
  parsePreconditionFailed,
} from './assert-topology.js';
export * from './errors.js';
export {
  EVGEN_HEADERS,
  envelopeToAmqpMessage,
  type AmqpMessage,
  type PublishProperties,
} from './amqp-message.js';
export {
  createAmqpConnector,
  fixedConnector,
  type AmqpConnector,
  type AmqpConnectorOptions,
} from './connector.js';
export {
  ConfirmedPublisher,
  type ConfirmedPublisherOptions,
  type ConfirmedPublisherStats,
  type ConnectionSource,
} from './confirmed-publisher.js';
export {
  publishEnvelope,
  rabbitRelayPublisher,
  routeFor,
  type PublishEnvelopeOptions,
} from './envelope-publishing.js';
export {
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- the old name, kept one release
  createConsumerRunner,
  type ConsumerRunner,
  type ConsumerRunnerEvent,
  type ConsumerRunnerMetrics,
  type ConsumerRunnerOptions,
} from './consumer-runner.js';
export { consumerQueueStats, type ConsumerQueueStats } from './queue-stats.js';
export { rabbitMqQueueDepths } from './queue-depths.js';
export {
  deadLetterDiagnostics,
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- the old name, kept one release
  listDeadLetters,
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- the old name, kept one release
  replayDeadLetters,
  replayHeaders,
  type DeadLetter,
  type DeadLetterDiagnostics,
  type ListDeadLettersOptions,
  type ReplayDeadLettersOptions,
  type ReplayDeadLettersResult,
} from './dead-letters.js';
