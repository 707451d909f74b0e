// The runtime that generated code imports (`evgen-runtime`, packed from this folder; also
// `evgen/runtime` inside the generator package). It never imports generator code.
//
// A chosen surface: what generated code imports and what a service wires, operates or catches,
// each name listed in docs/reference/runtime.md and pinned by api-report/evgen-runtime.txt.
// Everything else (the delivery core, failure classification, wire headers, SQL helpers, client
// adapters' plumbing) is internal: tests reach it through the module files.

// Envelopes and validation (generated envelope, catalog and validator files).
export {
  createEnvelope,
  newMessageId,
  type Envelope,
  type EnvelopeMeta,
  type EventVersionDescriptor,
} from './envelope.js';
export {
  createEnvelopeParser,
  type EnvelopeParser,
  type ParseEnvelopeResult,
} from './parse-envelope.js';
export {
  payloadValidator,
  type PayloadValidator,
  type ValidationResult,
} from './payload-validator.js';
export { linearPattern } from './linear-pattern.js';

// Errors a handler throws or a caller catches.
export {
  CdcServerNotReadyError,
  EvgenError,
  NonRetryableError,
  OutsideTransactionError,
  RetryableError,
  UnavailableError,
  UnknownEventError,
  ValidationError,
  isUnavailableError,
  type CdcServerProblem,
  type Violation,
} from './errors.js';
export { MalformedMessageError } from './delivery/malformed-message-error.js';
export {
  MessageBodyError,
  type MessageBodyLimits,
  type MessageBodyProblem,
} from './decode-message-body.js';
export {
  UnsupportedDatabaseSettingError,
  UnsupportedDatabaseVersionError,
} from './db/mysql-server-version.js';
export { AMQP_LIMITS, KAFKA_LIMITS, UnpublishableMessageError } from './transport-limits.js';

// Databases.
export {
  pgTransaction,
  pgliteDatabase,
  pgliteTransaction,
  postgresDatabase,
  type Database,
  type PostgresDatabaseOptions,
  type QueryOptions,
  type QueryResult,
  type Transaction,
} from './db/database.js';
export { mysqlDatabase, mysqlTransaction } from './db/mysql-database.js';
export {
  openDatabase,
  type DatabaseLocation,
  type OpenDatabaseOptions,
  type OpenedDatabase,
} from './db/open-database.js';

// The transactional outbox: schema, writer, relay and operator functions.
export { migrateOutbox, outboxMigrationSql } from './outbox/migration.js';
export { type OutboxTableOptions } from './outbox/outbox-table.js';
export {
  writeCdcOutboxEvents,
  writeOutboxEvent,
  type CdcOutboxEventToWrite,
  type OutboxWriteContext,
  type OutboxWriteOptions,
} from './outbox/write-outbox-event.js';
export {
  createOutboxRelay,
  type OutboxRelay,
  type RelayMetrics,
  type RelayStopOptions,
} from './outbox/relay.js';
export { type OutboxRelayOptions, type RelayBatchResult } from './outbox/relay-options.js';
export { OutboxPublishTimeoutError } from './outbox/relay-errors.js';
export type { ChainPublishResult, OutboundMessage, Publisher } from './publisher.js';
export { RecordingPublisher } from './outbox/recording-publisher.js';
export { outboxStats, type OutboxStats } from './outbox/outbox-stats.js';
export { findOutboxEvent, type OutboxEventRecord } from './outbox/find-outbox-event.js';
export {
  listDeadOutboxEvents,
  reviveDeadOutboxEvents,
  type DeadOutboxEvent,
} from './outbox/dead-events.js';
export { pruneOutbox, type PruneOutboxOptions } from './outbox/prune-outbox.js';
export {
  cdcOutboxMigrationSql,
  migrateCdcOutbox,
  type CdcOutboxMigrationOptions,
} from './outbox/cdc-outbox.js';
export { cdcOutboxProblems } from './outbox/cdc-outbox-status.js';
export {
  cdcConnectorOffsets,
  confirmCdcConnectorOffsets,
  type CdcConnectorOffsetsOptions,
} from './outbox/cdc-connector-offsets.js';

// HTTP request idempotency tied to the outbox: one key → one committed execution → one set of events.
export {
  IdempotencyKeyError,
  parseIdempotencyKey,
  type IdempotencyKeyProblem,
} from './idempotency/idempotency-key.js';
export {
  MAX_IDEMPOTENCY_KEY_LENGTH,
  idempotencyMigrationSql,
  migrateIdempotency,
} from './idempotency/idempotency-migration.js';
export {
  DEFAULT_IDEMPOTENCY_TABLE,
  type IdempotencyStatus,
  type IdempotencyTableOptions,
} from './idempotency/idempotency-table.js';
export {
  canonicalJson,
  defaultRequestFingerprint,
  type FingerprintInput,
  type RequestFingerprint,
} from './idempotency/request-fingerprint.js';
export { IDEMPOTENCY_KEY_HEADER, requestEventMessageId } from './idempotency/request-event-ids.js';
export {
  runIdempotent,
  type IdempotencyOptions,
  type IdempotentHandler,
  type IdempotentHandlerContext,
  type IdempotentOutcome,
  type IdempotentRequest,
} from './idempotency/run-idempotent.js';
export {
  IDEMPOTENT_REPLAYED_HEADER,
  handleIdempotentHttp,
  type HttpIdempotencyOptions,
  type HttpRequestParts,
  type IdempotentHttpResponse,
  type IdempotentHttpResult,
} from './idempotency/http-idempotency.js';
export {
  idempotentExpress,
  type ExpressIdempotentHandler,
  type ExpressIdempotentRequestLike,
  type ExpressIdempotentResponseLike,
} from './idempotency/express-idempotency.js';
export {
  idempotentFastify,
  type FastifyIdempotentHandler,
  type FastifyIdempotentReplyLike,
  type FastifyIdempotentRequestLike,
} from './idempotency/fastify-idempotency.js';
export { idempotentFetch, type FetchIdempotentHandler } from './idempotency/fetch-idempotency.js';
export {
  pruneIdempotencyKeys,
  type PruneIdempotencyKeysOptions,
} from './idempotency/prune-idempotency-keys.js';
export {
  findIdempotencyKey,
  type IdempotencyKeyRecord,
} from './idempotency/find-idempotency-key.js';

// The inbox: inbox-guarded consumers (generated consumer files), the guard, retention.
export { inboxMigrationSql, migrateInbox } from './inbox/migrate-inbox.js';
export { type InboxTableOptions } from './inbox/inbox-tables.js';
export {
  createInboxConsumer,
  type ConsumerContext,
  type ConsumerHandler,
  type InboxConsumer,
  type InboxConsumerOptions,
  type Upcaster,
} from './inbox/consumer.js';
export {
  handleWithInbox,
  type InboxGuardOptions,
  type InboxHandler,
  type InboxOutcome,
} from './inbox/inbox-guard.js';
export { InboxHandlerError } from './inbox/inbox-handler-error.js';
export { AggregateVersionGapError } from './inbox/aggregate-order.js';
export { findInboxEntries, type InboxEntry } from './inbox/find-inbox-entries.js';
export { pruneInbox, type PruneInboxOptions } from './inbox/prune-inbox.js';

// What every consumer transport shares.
export type { MessageHandler } from './delivery/message-handler.js';
export type { DeliveryCounts } from './delivery/delivery-outcome.js';
export type { CircuitBreakerOptions } from './delivery/circuit-breaker.js';
export type { BackoffOptions } from './backoff.js';
export type { DeliveryRunner } from './delivery/delivery-runner.js';
export type { FailureClass, FailureClassifier } from './delivery/failure.js';
export type { DeliveryEvent, DeliveryEventOf } from './delivery/delivery-event.js';
export type { LifecycleEvent, RunnerState } from './delivery/runner-lifecycle.js';
export type { RestartingEvent } from './delivery/supervisor.js';
export type { RunnerCoreEvent } from './delivery/runner-core.js';
export { RunnerOptionsError, type DeliveryRunnerOptions } from './delivery/runner-options.js';
export type { RunnerTimers } from './delivery/runner-timers.js';
export {
  matchesDeadLetterFilter,
  type CommonDiagnostics,
  type DeadLetterFilter,
  type DeadLetterRecord,
  type DeadLetterReplayOutcome,
  type DeadLetterSource,
} from './delivery/dead-letter-source.js';

// RabbitMQ.
export {
  resolveTopology,
  type ConsumerRoutes,
  type RabbitRoutes,
  type RabbitTopology,
  type ResolvedTopology,
  type TopologyOptions,
} from './rabbitmq/topology.js';
export { assertTopology } from './rabbitmq/assert-topology.js';
export {
  createAmqpConnector,
  type AmqpConnector,
  type AmqpConnectorOptions,
} from './rabbitmq/connector.js';
export {
  ConfirmedPublisher,
  type ConfirmedPublisherOptions,
} from './rabbitmq/confirmed-publisher.js';
export {
  publishEnvelope,
  rabbitRelayPublisher,
  type PublishEnvelopeOptions,
} from './rabbitmq/envelope-publishing.js';
export {
  ChannelClosedError,
  PublishNackedError,
  PublishTimeoutError,
  RabbitExchangeMissingError,
  TopologyConflictError,
  UnroutableError,
} from './rabbitmq/errors.js';
export {
  createRabbitMqConsumerRunner,
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- the old name, kept one release
  createConsumerRunner,
  type RabbitMqConsumerRunner,
  type RabbitMqConsumerRunnerEvent,
  type RabbitMqConsumerRunnerMetrics,
  type RabbitMqConsumerRunnerOptions,
  type ConsumerRunner,
  type ConsumerRunnerEvent,
  type ConsumerRunnerMetrics,
  type ConsumerRunnerOptions,
} from './rabbitmq/consumer-runner.js';
export type {
  GroupedRabbitMqRunnerOptions,
  RabbitMqRunnerSettings,
} from './rabbitmq/consumer-runner-options.js';
export {
  listRabbitMqDeadLetters,
  replayRabbitMqDeadLetters,
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- the old name, kept one release
  listDeadLetters,
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- the old name, kept one release
  replayDeadLetters,
  type DeadLetter,
  type ListDeadLettersOptions,
  type ReplayDeadLettersOptions,
  type ReplayDeadLettersResult,
} from './rabbitmq/dead-letters.js';
export { consumerQueueStats, type ConsumerQueueStats } from './rabbitmq/queue-stats.js';
export { rabbitMqQueueDepths } from './rabbitmq/queue-depths.js';
export {
  rabbitMqDeadLetterSource,
  type RabbitMqDeadLetterSourceOptions,
} from './rabbitmq/rabbitmq-dead-letter-source.js';

// In process (no server).
export { InProcessBroker } from './in-process/in-process-broker.js';
export type {
  ConsumedRecord,
  InProcessDeadLetter,
  InProcessSubscriber,
  RetriedRecord,
} from './in-process/in-process-records.js';
export type {
  GroupedInProcessBrokerOptions,
  InProcessBrokerOptions,
  InProcessSettings,
} from './in-process/in-process-options.js';
export { inProcessDeadLetterSource } from './in-process/in-process-dead-letter-source.js';

// Kafka (the client adapters are the entry points `evgen-runtime/kafkajs` and
// `evgen-runtime/platformatic-kafka`).
export type {
  KafkaAdmin,
  KafkaClient,
  KafkaConnection,
  KafkaProducer,
} from './kafka/kafka-client.js';
export {
  ensureKafkaTopics,
  KafkaTopologyMismatchError,
  type EnsureKafkaTopicsResult,
  type KafkaTopology,
  type KafkaTopologyOptions,
} from './kafka/kafka-topology.js';
export {
  KafkaChainHeldBackError,
  kafkaRelayPublisher,
  publishKafkaEnvelope,
  type ConfluentWireFormat,
  type KafkaRelayPublisherOptions,
  type KafkaRoutes,
  type KafkaWireFormat,
  type PublishKafkaOptions,
} from './kafka/kafka-publishing.js';
export { KafkaTimeoutError } from './kafka/send-timeout.js';
export { KafkaTopicMissingError } from './kafka/topic-lookup.js';
export { frameConfluent, readConfluentFrame } from './kafka/confluent-framing.js';
export {
  createSchemaRegistryClient,
  type SchemaRegistryAuth,
  type SchemaRegistryClient,
  type SchemaRegistryOptions,
} from './registry/schema-registry-client.js';
export {
  SchemaRegistryError,
  type SchemaRegistryErrorKind,
} from './registry/schema-registry-error.js';
export {
  createSchemaIds,
  type RegisteredEventVersion,
  type SchemaIds,
  type SchemaIdsOptions,
} from './registry/schema-ids.js';
export {
  SUBJECT_NAME_STRATEGIES,
  subjectName,
  type SubjectNameStrategy,
} from './registry/subject-name.js';
export {
  DEFAULT_KAFKA_RETRY_TIERS_MS,
  kafkaDeadLetterTopic,
  kafkaRetryTopic,
} from './kafka/topic-names.js';
export { createKafkaConsumerRunner } from './kafka/consumer/kafka-consumer-runner.js';
export type {
  KafkaConsumerRoutes,
  KafkaConsumerRunner,
  KafkaConsumerRunnerEvent,
  KafkaConsumerRunnerMetrics,
  KafkaPartitionLag,
} from './kafka/consumer/kafka-consumer-types.js';
export type {
  GroupedKafkaRunnerOptions,
  KafkaConsumerRunnerOptions,
  KafkaRunnerSettings,
} from './kafka/consumer/kafka-consumer-options.js';
export {
  kafkaConsumerRoutes,
  type KafkaConsumerRoutesOptions,
} from './kafka/consumer/consumer-routes.js';
export {
  listKafkaDeadLetters,
  replayKafkaDeadLetters,
  type KafkaDeadLetter,
  type ListKafkaDeadLettersOptions,
  type ReplayKafkaDeadLettersOptions,
  type ReplayKafkaDeadLettersResult,
} from './kafka/consumer/kafka-dead-letters.js';
export {
  kafkaDeadLetterSource,
  type KafkaDeadLetterSourceOptions,
} from './kafka/consumer/kafka-dead-letter-source.js';
export {
  kafkaQueueDepths,
  type KafkaQueueDepthsOptions,
} from './kafka/consumer/kafka-queue-depths.js';

// Pulsar: the client boundary, its WebSocket adapter (pure JavaScript, `ws`), topics and producers.
export {
  parseTopicName,
  PulsarClientError,
  type PulsarClient,
  type PulsarConsumer,
  type PulsarConsumerHandlers,
  type PulsarConsumerOptions,
  type PulsarInboundMessage,
  type PulsarOutboundMessage,
  type PulsarProducer,
  type PulsarProducerOptions,
  type PulsarProperties,
  type PulsarSubscriptionType,
} from './pulsar/pulsar-client.js';
export {
  DEFAULT_PULSAR_MAX_FRAME_BYTES,
  pulsarWebSocketClient,
  type PulsarWebSocketClient,
  type PulsarWebSocketConnection,
} from './pulsar/websocket-client.js';
export {
  pulsarRelayPublisher,
  type PulsarRelayPublisherOptions,
} from './pulsar/pulsar-relay-publisher.js';
export {
  ensurePulsarTopics,
  ensurePulsarTopology,
  type EnsurePulsarTopicsResult,
  type PulsarAdminConnection,
  type PulsarTopicConflict,
  type PulsarTopicSpec,
  type PulsarTopology,
  type PulsarTopologyOptions,
} from './pulsar/pulsar-topology.js';
export {
  createPulsarProducers,
  envelopeToPulsarMessage,
  publishPulsarEnvelope,
  pulsarRouteFor,
  pulsarRouteTopic,
  type PublishPulsarOptions,
  type PulsarProducers,
  type PulsarRoute,
  type PulsarRoutes,
} from './pulsar/pulsar-publishing.js';
export { createPulsarConsumerRunner } from './pulsar/consumer/pulsar-consumer-runner.js';
export {
  type PulsarConsumerRunner,
  type PulsarConsumerRunnerEvent,
  type PulsarConsumerRunnerMetrics,
  type PulsarConsumerRunnerOptions,
} from './pulsar/consumer/pulsar-consumer-options.js';
export {
  DEFAULT_PULSAR_RETRY_TIERS_MS,
  pulsarConsumerRoutes,
  pulsarConsumerTopics,
  type PulsarConsumerRoutes,
  type PulsarConsumerRoutesOptions,
} from './pulsar/consumer/pulsar-consumer-routes.js';
export { PULSAR_CONSUMER_PROPERTIES } from './pulsar/consumer/pulsar-copies.js';
export {
  pulsarDeadLetterSource,
  type PulsarDeadLetterSourceOptions,
} from './pulsar/consumer/pulsar-dead-letter-source.js';

// Metrics (OpenTelemetry).
export { registerEvgenMetrics, type EvgenMetrics, type EvgenMetricsOptions } from './metrics.js';

// Health and readiness (`/livez`, `/readyz`) for orchestrators.
export type { HealthFacts, HealthStatus, RunnerHealth } from './delivery/runner-health.js';
export {
  createHealthEndpoints,
  type FastifyLike,
  type FastifyReplyLike,
  type HealthCheckable,
  type HealthEndpoints,
  type HealthEndpointsOptions,
  type HealthResponse,
  type MetricsSource,
  type NodeRequestLike,
  type NodeResponseLike,
} from './health/health-endpoints.js';
export {
  createPrometheusMetrics,
  type MeteredConsumerRunner,
  type MeteredPublisher,
  type MeteredRelay,
  type PrometheusMetrics,
  type PrometheusMetricsOptions,
  type PrometheusRegistry,
} from './health/prometheus-metrics.js';
export { OTHER_LABEL_VALUE } from './health/bounded-label.js';
export type { QueueDepth, QueueDepthSource, QueueRole } from './health/queue-depth.js';
export {
  DEFAULT_SHUTDOWN_TIMEOUT_MS,
  shutdownOnSignal,
  type GracefulShutdown,
  type GracefulShutdownOptions,
  type ShutdownEvent,
  type StoppableRelay,
  type StoppableRunner,
} from './health/graceful-shutdown.js';
