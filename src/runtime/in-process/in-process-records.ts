/**
 * What the in-process broker delivers and records for tests and operators to read: its
 * subscribers, the messages as they travel and are queued, every handled delivery, every retry
 * and every dead letter.
 */
import type { DeadLetterFacts } from '../delivery/failure.js';
import type { MessageHandler } from '../delivery/message-handler.js';

/** A consumer the broker delivers to: generated inbox consumers fit (`name`, `subscribes`, `handle`). */
export interface InProcessSubscriber extends MessageHandler {
  /** Event types delivered to it. */
  readonly subscribes: readonly string[];
}

/** A message as it travels: the JSON body and its messageId property, like an AMQP message. */
export interface InProcessMessage {
  readonly messageId: string;
  readonly eventType: string;
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
}

export interface ConsumedRecord {
  readonly consumer: string;
  readonly messageId: string;
  readonly eventType: string;
  readonly attempt: number;
  /** What the handler resolved with: `'handled'` or `'duplicate'` for inbox consumers. */
  readonly result: unknown;
}

export interface RetriedRecord {
  readonly consumer: string;
  readonly messageId: string;
  readonly attempt: number;
  readonly delayMs: number;
  readonly errorType: string;
  readonly errorMessage: string;
}

export interface InProcessDeadLetter {
  readonly consumer: string;
  readonly message: InProcessMessage;
  readonly errorType: string;
  readonly errorMessage: string;
  readonly attempts: number;
  readonly firstFailureAt: string;
  readonly deadLetteredAt: string;
  /** Times it was replayed before this dead-lettering. */
  readonly replays: number;
}

/** A delivery waiting in the broker's queue (delivery-queue.ts) or being handled. */
export interface QueuedDelivery {
  readonly subscriber: InProcessSubscriber;
  readonly message: InProcessMessage;
  readonly attempt: number;
  readonly firstFailureAt: string | undefined;
  readonly replays: number;
}

/** The dead letter a delivery becomes, with the pipeline's diagnostics. */
export function deadLetterOf(
  delivery: QueuedDelivery,
  letter: DeadLetterFacts,
): InProcessDeadLetter {
  const now = letter.failure.at.toISOString();
  return {
    consumer: delivery.subscriber.name,
    message: delivery.message,
    errorType: letter.failure.errorType,
    errorMessage: letter.failure.message,
    attempts: letter.attempts,
    firstFailureAt: delivery.firstFailureAt ?? now,
    deadLetteredAt: now,
    replays: delivery.replays,
  };
}
