/**
 * The headers a failed delivery travels on with: a retry copy (next tier, attempt + 1), a gap
 * wait (same attempt) or a dead letter (full diagnostics). Built once per failure from what was
 * received, so every copy carries the same first-failure time, original route and last error.
 */
import type { ConsumeMessage, MessageProperties } from 'amqplib';
import { describeError } from '../errors.js';
import {
  copyPublishProperties,
  EVGEN_HEADERS,
  headerString,
  type PublishProperties,
} from './amqp-message.js';
import { copyableHeaders, serializeHeaders, UNENCODABLE_HEADERS } from './received-headers.js';

const MAX_ERROR_TEXT = 2_000;

export function truncate(text: string): string {
  return text.length <= MAX_ERROR_TEXT ? text : `${text.slice(0, MAX_ERROR_TEXT)}…`;
}

export interface FailureContext {
  /** Received headers that may be copied (see received-headers.ts). */
  readonly received: Record<string, unknown>;
  /** Failure bookkeeping every copy carries. */
  readonly common: Record<string, unknown>;
  readonly errorType: string;
  readonly errorMessage: string;
  readonly firstFailureAt: string;
  readonly now: string;
  /** The property when present, else the body's own id: a copy never gets a new one. */
  readonly messageId: string | undefined;
  /** Publish properties of a copy of the received message with `headers`. */
  properties(headers: Record<string, unknown>): PublishProperties;
}

export function failureContext(
  message: ConsumeMessage,
  error: unknown,
  messageId: string | undefined,
): FailureContext {
  const now = new Date().toISOString();
  const described = describeError(error);
  // Wrapping errors (the inbox's InboxHandlerError) name the original failure's type.
  const causeType =
    typeof error === 'object' && error !== null
      ? (error as { causeType?: unknown }).causeType
      : undefined;
  const errorType = typeof causeType === 'string' ? causeType : described.type;
  // Producer-set runner headers are ignored; unencodable ones travel serialized.
  const received = copyableHeaders(message);
  const firstFailureAt = headerString(received, EVGEN_HEADERS.firstFailureAt) ?? now;
  const common = {
    [EVGEN_HEADERS.firstFailureAt]: firstFailureAt,
    [EVGEN_HEADERS.lastFailureAt]: now,
    [EVGEN_HEADERS.lastErrorType]: errorType,
    [EVGEN_HEADERS.lastError]: truncate(described.message),
    [EVGEN_HEADERS.originalExchange]:
      headerString(received, EVGEN_HEADERS.originalExchange) ?? message.fields.exchange,
    [EVGEN_HEADERS.originalRoutingKey]:
      headerString(received, EVGEN_HEADERS.originalRoutingKey) ?? message.fields.routingKey,
  };
  return {
    received,
    common,
    errorType,
    errorMessage: described.message,
    firstFailureAt,
    now,
    messageId,
    properties: (headers) =>
      copyPublishProperties(
        messageId !== undefined ? { ...message.properties, messageId } : message.properties,
        headers,
      ),
  };
}

/** Dead-letter diagnostics (error, attempts, times, consumer, original route, trace). */
export function deadLetterHeaders(
  context: FailureContext,
  attempt: number,
  consumer: string,
  traceId: string | undefined,
  errorMessage: string,
): Record<string, unknown> {
  return {
    ...context.common,
    [EVGEN_HEADERS.attempt]: attempt,
    [EVGEN_HEADERS.errorType]: context.errorType,
    [EVGEN_HEADERS.errorMessage]: truncate(errorMessage),
    [EVGEN_HEADERS.attempts]: attempt,
    [EVGEN_HEADERS.consumer]: consumer,
    [EVGEN_HEADERS.deadLetteredAt]: context.now,
    ...(traceId !== undefined ? { [EVGEN_HEADERS.traceId]: traceId } : {}),
  };
}

/**
 * The dead letters to try in turn: the full one, then a minimal one whose headers are only
 * evgen's diagnostics plus every received header serialized, which always encodes.
 */
export function deadLetterCandidates(
  context: FailureContext,
  message: ConsumeMessage,
  diagnostics: Record<string, unknown>,
): PublishProperties[] {
  return [
    context.properties({ ...context.received, ...diagnostics }),
    copyPublishProperties({ messageId: context.messageId } as MessageProperties, {
      ...diagnostics,
      [UNENCODABLE_HEADERS]: serializeHeaders(message.properties.headers ?? {}),
    }),
  ];
}
