/**
 * Decoding and identifying a delivery, the same for every transport: the body is decoded within
 * the message limits, must be a JSON object with a `messageId`, and that id must agree with the
 * one the transport carries beside the body when the producer set one.
 */
import {
  decodeMessageBody,
  MessageBodyError,
  type MessageBodyLimits,
} from '../decode-message-body.js';
import { MalformedMessageError } from './malformed-message-error.js';

/**
 * Decodes a delivery's body within `limits` and checks its messageId against the transport's
 * (`hint.messageId`, named `hintName` in the error: an AMQP property, a Kafka header); throws
 * MalformedMessageError with the reason.
 */
export function parseDelivery(
  content: Uint8Array | null,
  hint: { readonly messageId?: unknown },
  limits: MessageBodyLimits = {},
  hintName = 'messageId property',
): Record<string, unknown> {
  if (content === null) throw new MalformedMessageError('record has no value (a tombstone)');
  let body: unknown;
  try {
    body = decodeMessageBody(content, limits);
  } catch (error) {
    if (error instanceof MessageBodyError) throw new MalformedMessageError(error.message);
    throw error;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new MalformedMessageError('body is not a JSON object (an evgen envelope)');
  const bodyId = (body as { messageId?: unknown }).messageId;
  if (typeof bodyId !== 'string' || bodyId === '')
    throw new MalformedMessageError('body has no messageId');
  // A producer that is not evgen may leave the transport's id out: then the body's messageId
  // stands. Only two ids that disagree make the message unusable.
  const hinted = hint.messageId;
  if (typeof hinted === 'string' && hinted !== '' && hinted !== bodyId)
    throw new MalformedMessageError(`${hintName} ${hinted} differs from body messageId ${bodyId}`);
  return body as Record<string, unknown>;
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The `messageId` inside a JSON body, if it has one (best effort, for deliveries that failed the checks). */
export function bodyMessageId(
  content: Uint8Array | null,
  limits: MessageBodyLimits,
): string | undefined {
  if (content === null) return undefined;
  try {
    const body: unknown = decodeMessageBody(content, limits);
    return typeof body === 'object' && body !== null
      ? nonEmptyString((body as { messageId?: unknown }).messageId)
      : undefined;
  } catch {
    return undefined;
  }
}

/** A non-empty string field of a body, if it has one. */
export function bodyString(
  body: Readonly<Record<string, unknown>> | undefined,
  name: string,
): string | undefined {
  return nonEmptyString(body?.[name]);
}
