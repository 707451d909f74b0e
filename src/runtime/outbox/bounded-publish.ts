/**
 * A publish bounded by the relay's `publishTimeoutMs` and by `stop({ timeoutMs })`: whichever
 * comes first settles the outcome, and whatever the publisher does later is ignored.
 */
import type { ChainPublishResult, OutboundMessage, Publisher } from '../publisher.js';
import { OutboxPublishTimeoutError } from './relay-errors.js';

/** Timer functions the relay uses for publish and stop timeouts; injectable so tests need not wait. */
export interface RelayTimers {
  /** Calls `callback` after `ms`; returns a handle for `clearTimeout`. */
  setTimeout(callback: () => void, ms: number): unknown;
  /** Cancels a pending `setTimeout`. */
  clearTimeout(handle: unknown): void;
}

export const REAL_TIMERS: RelayTimers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

type PublishOutcome =
  | { readonly kind: 'published' }
  | { readonly kind: 'failed'; readonly error: unknown }
  | { readonly kind: 'abandoned' };

export interface BoundedPublisher {
  /** Whether `publish` takes several rows of one aggregate at once (the publisher has `publishChain`). */
  readonly publishesChains: boolean;
  /**
   * Publishes one message, or several of one aggregate in order when `publishesChains`; one
   * outcome per message. A timeout fails every message not settled by then.
   */
  publish(messages: readonly OutboundMessage[]): Promise<readonly PublishOutcome[]>;
  /** Settles every publish still waiting as `abandoned` (stop's timeout passed). */
  abandonAll(): void;
}

/** What the publisher was asked, as one promise of one result per message. */
function publishAll(
  publisher: Publisher,
  messages: readonly OutboundMessage[],
): Promise<readonly ChainPublishResult[]> {
  if (publisher.publishChain !== undefined && messages.length > 1)
    return publisher.publishChain(messages);
  if (messages.length !== 1)
    throw new TypeError(
      `a publisher without publishChain takes one message (got ${messages.length})`,
    );
  return publisher.publish(messages[0]!).then(
    () => [{ stored: true }],
    (error: unknown) => [{ stored: false, error }],
  );
}

export function boundedPublisher(
  publisher: Publisher,
  timeoutMs: number,
  timers: RelayTimers,
): BoundedPublisher {
  const abandonWaiters = new Set<() => void>();
  return {
    publishesChains: publisher.publishChain !== undefined,
    publish(messages) {
      return new Promise((resolve) => {
        let settled = false;
        const finish = (outcome: (index: number) => PublishOutcome) => {
          if (settled) return;
          settled = true;
          timers.clearTimeout(timer);
          abandonWaiters.delete(abandon);
          resolve(messages.map((_, index) => outcome(index)));
        };
        const abandon = () => finish(() => ({ kind: 'abandoned' }));
        const timer = timers.setTimeout(() => {
          const error = new OutboxPublishTimeoutError(timeoutMs);
          finish(() => ({ kind: 'failed', error }));
        }, timeoutMs);
        abandonWaiters.add(abandon);
        let publishing: Promise<readonly ChainPublishResult[]>;
        try {
          publishing = publishAll(publisher, messages);
        } catch (error) {
          publishing = Promise.reject(error);
        }
        publishing.then(
          (results) =>
            finish((index) => {
              const result = results[index];
              if (result === undefined)
                return {
                  kind: 'failed',
                  error: new Error('the publisher gave no result for this message'),
                };
              return result.stored
                ? { kind: 'published' }
                : { kind: 'failed', error: result.error };
            }),
          (error: unknown) => finish(() => ({ kind: 'failed', error })),
        );
      });
    },
    abandonAll() {
      for (const abandon of [...abandonWaiters]) abandon();
    },
  };
}
