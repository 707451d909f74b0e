// The transport-neutral delivery core: what every consumer transport runs a delivery through.
export type { Delivery, DeliveryContext, DeliveryFacts, TransportName } from './delivery.js';
export type { MessageHandler } from './message-handler.js';
export { MalformedMessageError } from './malformed-message-error.js';
export {
  createDeliveryPipeline,
  type DeliveryPipeline,
  type DeliveryPipelineOptions,
  type IdentifiedDelivery,
} from './delivery-pipeline.js';
export {
  DeliveryCounters,
  type DeliveryCounts,
  type DeliveryOutcome,
  type SkipReason,
} from './delivery-outcome.js';
export {
  classifyFailure,
  failureFacts,
  isRetryableFailure,
  type DeadLetterFacts,
  type DeadLetterReason,
  type FailureClass,
  type FailureFacts,
} from './failure.js';
export { parseDelivery } from './parse-delivery.js';
export { type CircuitBreakerOptions } from './circuit-breaker.js';
