/**
 * The observability events every consumer runner reports through its `onEvent` hook, in one
 * vocabulary; a transport adds its own (RabbitMQ channel restarts, Kafka assignments, …) and may
 * extend these with where the delivery was (a Kafka record's topic, partition and offset).
 */
import type { LifecycleEvent } from './runner-lifecycle.js';

export type DeliveryEvent =
  | LifecycleEvent
  | {
      /** The handler resolved (or the inbox had the messageId already) and it was settled. */
      readonly type: 'handled';
      readonly messageId: string;
      readonly attempt: number;
      readonly result: unknown;
    }
  | {
      /** A delivery of a type the consumer does not subscribe to: settled, no handler ran. */
      readonly type: 'skipped';
      readonly messageId: string | undefined;
      readonly eventType: string;
    }
  | {
      readonly type: 'retried';
      readonly messageId: string;
      /** The attempt that failed. */
      readonly attempt: number;
      readonly delayMs: number;
      readonly error: unknown;
    }
  | {
      readonly type: 'dead-lettered';
      readonly messageId: string | undefined;
      readonly attempts: number;
      readonly error: unknown;
    }
  | {
      /** A dependency (the database) is unavailable: consumption pauses for `delayMs`. */
      readonly type: 'paused';
      readonly delayMs: number;
      readonly error: unknown;
    }
  | { readonly type: 'resumed' }
  | { readonly type: 'error'; readonly error: unknown };

/** The delivery events of the given types, e.g. `DeliveryEventOf<'handled' | 'skipped'>`. */
export type DeliveryEventOf<T extends DeliveryEvent['type']> = Extract<DeliveryEvent, { type: T }>;
