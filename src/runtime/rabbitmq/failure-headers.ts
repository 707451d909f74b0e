/**
 * The headers a failed delivery travels on with: a retry copy (next tier, attempt + 1), a gap
 * wait (same attempt) or a dead letter (full diagnostics). Built once per failure from what was
 * received, so every copy carries the same first-failure time, original route and last error.
 */
import type { ConsumeMessage, MessageProperties } from 'amqplib';
import { truncateText, type DeadLetterFacts, type FailureFacts } from '../delivery/failure.js';
import {
  copyPublishProperties,
  EVGEN_HEADERS,
  headerString,
  type PublishProperties,
} from './amqp-message.js';
import { copyableHeaders, serializeHeaders, UNENCODABLE_HEADERS } from './received-headers.js';
import { CopyCuts, fitsShortString } from './copy-limits.js';

export interface FailureContext {
  /** Received headers that may be copied (see received-headers.ts). */
  readonly received: Record<string, unknown>;
  /** Failure bookkeeping every copy carries. */
  readonly common: Record<string, unknown>;
  readonly errorType: string;
  readonly errorMessage: string;
  readonly firstFailureAt: string;
  readonly now: string;
  /** The property when present, else the body's own id (for events and diagnostics). */
  readonly messageId: string | undefined;
  /**
   * Whether copies carry that id as their messageId property. A body's id becomes a property only
   * when it fits an AMQP shortstr (255 bytes; an envelope's UUID always does): a longer one could
   * not be encoded. A copy without it gets an invented id, so it could not come back as the same
   * message: such a message is dead-lettered instead of retried.
   */
  readonly carriesId: boolean;
  /** Publish properties of a copy of the received message with `headers`. */
  properties(headers: Record<string, unknown>): PublishProperties;
}

export function failureContext(
  message: ConsumeMessage,
  failure: FailureFacts,
  messageId: string | undefined,
): FailureContext {
  const now = failure.at.toISOString();
  const errorType = failure.errorType;
  const property: unknown = message.properties.messageId;
  const hasProperty = typeof property === 'string' && property !== '';
  const carriesId = hasProperty || (messageId !== undefined && fitsShortString(messageId));
  // Producer-set runner headers are ignored; unencodable ones travel serialized.
  const received = copyableHeaders(message);
  const firstFailureAt = headerString(received, EVGEN_HEADERS.firstFailureAt) ?? now;
  const common = {
    [EVGEN_HEADERS.firstFailureAt]: firstFailureAt,
    [EVGEN_HEADERS.lastFailureAt]: now,
    [EVGEN_HEADERS.lastErrorType]: errorType,
    [EVGEN_HEADERS.lastError]: truncateText(failure.message),
    [EVGEN_HEADERS.originalExchange]:
      headerString(received, EVGEN_HEADERS.originalExchange) ?? message.fields.exchange,
    [EVGEN_HEADERS.originalRoutingKey]:
      headerString(received, EVGEN_HEADERS.originalRoutingKey) ?? message.fields.routingKey,
  };
  return {
    received,
    common,
    errorType,
    errorMessage: failure.message,
    firstFailureAt,
    now,
    messageId,
    carriesId,
    properties: (headers) =>
      carriesId
        ? copyPublishProperties({ ...message.properties, messageId }, headers)
        : copyPublishProperties(
            { ...message.properties, messageId: undefined },
            withIdCut(headers, messageId),
          ),
  };
}

/** Headers recording that the body's messageId was not made the copy's messageId property. */
function withIdCut(
  headers: Record<string, unknown>,
  bodyId: string | undefined,
): Record<string, unknown> {
  if (bodyId === undefined) return headers;
  const cuts = new CopyCuts(headers[EVGEN_HEADERS.cut]);
  cuts.add(
    'property messageId',
    `body messageId not used: ${Buffer.byteLength(bodyId, 'utf8')} bytes, an AMQP shortstr holds 255`,
  );
  return { ...headers, [EVGEN_HEADERS.cut]: cuts.toHeader() };
}

/** Dead-letter diagnostics (error, attempts, times, consumer, original route, trace). */
export function deadLetterHeaders(
  context: FailureContext,
  letter: DeadLetterFacts,
  errorMessage: string,
): Record<string, unknown> {
  return {
    ...context.common,
    [EVGEN_HEADERS.attempt]: letter.attempts,
    [EVGEN_HEADERS.errorType]: context.errorType,
    [EVGEN_HEADERS.errorMessage]: truncateText(errorMessage),
    [EVGEN_HEADERS.attempts]: letter.attempts,
    [EVGEN_HEADERS.consumer]: letter.consumer,
    [EVGEN_HEADERS.deadLetteredAt]: context.now,
    ...(letter.traceId !== undefined ? { [EVGEN_HEADERS.traceId]: letter.traceId } : {}),
  };
}

/**
 * The dead letters to try in turn: the full one, then a minimal one whose headers are only
 * evgen's diagnostics plus every received header serialized (dropped, and named in
 * `x-evgen-cut`, when that text is too large). Both are fitted to what can be encoded.
 */
export function deadLetterCandidates(
  context: FailureContext,
  message: ConsumeMessage,
  diagnostics: Record<string, unknown>,
): PublishProperties[] {
  const minimal = {
    ...diagnostics,
    [UNENCODABLE_HEADERS]: serializeHeaders(message.properties.headers ?? {}),
  };
  return [
    context.properties({ ...context.received, ...diagnostics }),
    context.carriesId
      ? copyPublishProperties({ messageId: context.messageId } as MessageProperties, minimal)
      : context.properties(minimal),
  ];
}
