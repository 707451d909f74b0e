/**
 * An AMQP delivery as the delivery core sees it: the body, messageId and event type from the
 * message's properties, the attempt and trace id from evgen's headers (believed only on
 * deliveries evgen itself sent back, received-headers.ts), and where it was read.
 */
import type { ConsumeMessage } from 'amqplib';
import type { Delivery } from '../delivery/delivery.js';
import type { GapClock } from '../delivery/gap-wait.js';
import { EVGEN_HEADERS, headerString } from './amqp-message.js';
import { trustedHeaders } from './received-headers.js';

/** The attempt a delivery is: `x-evgen-attempt`, 1 when absent or unreadable. */
function deliveryAttempt(headers: Record<string, unknown> | undefined): number {
  const value = headers?.[EVGEN_HEADERS.attempt];
  const number =
    typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : NaN;
  return Number.isInteger(number) && number >= 1 ? number : 1;
}

/**
 * The gap wait a parked message carries back (`x-evgen-gap-*`), undefined when it carries none.
 * Read as a claim: the delivery core bounds it (gap-wait.ts).
 */
function deliveryGapClock(headers: Record<string, unknown>): GapClock | undefined {
  const since = Date.parse(headerString(headers, EVGEN_HEADERS.gapSince) ?? '');
  if (!Number.isFinite(since)) return undefined;
  // A clock from before x-evgen-gap-first existed started at its first gap.
  const first = Date.parse(headerString(headers, EVGEN_HEADERS.gapFirst) ?? '');
  const value = headers[EVGEN_HEADERS.gapExpected];
  const expected = typeof value === 'string' && value !== '' ? Number(value) : value;
  return {
    firstAt: Number.isFinite(first) ? first : since,
    since,
    expected: Number.isSafeInteger(expected) ? (expected as number) : undefined,
  };
}

/** The message read from `queue` as a delivery. */
export function amqpDelivery(message: ConsumeMessage, queue: string): Delivery {
  const trusted = trustedHeaders(message);
  const attempt = deliveryAttempt(trusted);
  const messageId: unknown = message.properties.messageId;
  const type: unknown = message.properties.type;
  return {
    body: message.content,
    messageId: typeof messageId === 'string' && messageId !== '' ? messageId : undefined,
    eventType: typeof type === 'string' && type !== '' ? type : undefined,
    traceId: headerString(trusted, EVGEN_HEADERS.traceId),
    attempt,
    gapClock: deliveryGapClock(trusted),
    facts: {
      transport: 'rabbitmq',
      queue,
      redelivered: attempt > 1 || message.fields.redelivered,
      headers: message.properties.headers ?? {},
    },
  };
}
