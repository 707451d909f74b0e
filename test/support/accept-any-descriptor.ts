/**
 * An event version whose validators accept any payload, for tests about delivery (retries, dead
 * letters, inboxes, brokers) rather than validation: the payload is typed by the caller and its
 * aggregate id read from `aggregateIdProperty`.
 */
import type { EventVersionDescriptor } from 'evgen/runtime';

export interface AcceptAnyOptions {
  readonly aggregateType?: string;
  readonly aggregateIdProperty?: string;
  readonly compatibility?: string;
}

export function acceptAnyDescriptor<TPayload>(
  eventType: string,
  options: AcceptAnyOptions = {},
): EventVersionDescriptor<string, 1, TPayload> {
  const accept = (payload: unknown) => ({ ok: true as const, value: payload as TPayload });
  return {
    eventType,
    schemaVersion: 1,
    aggregateType: options.aggregateType ?? 'Order',
    aggregateIdProperty: options.aggregateIdProperty ?? 'orderId',
    validatePayload: accept,
    readPayload: accept,
    ...(options.compatibility === undefined ? {} : { compatibility: options.compatibility }),
  };
}
