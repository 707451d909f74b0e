/**
 * A publish bounded by the relay's `publishTimeoutMs` and by `stop({ timeoutMs })`: whichever
 * comes first settles the outcome, and whatever the publisher does later is ignored.
 */
import type { OutboundMessage, Publisher } from '../publisher.js';
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
  publish(message: OutboundMessage): Promise<PublishOutcome>;
  /** Settles every publish still waiting as `abandoned` (stop's timeout passed). */
  abandonAll(): void;
}

export function boundedPublisher(
  publisher: Publisher,
  timeoutMs: number,
  timers: RelayTimers,
): BoundedPublisher {
  const abandonWaiters = new Set<() => void>();
  return {
    publish(message) {
      return new Promise((resolve) => {
        let settled = false;
        const finish = (outcome: PublishOutcome) => {
          if (settled) return;
          settled = true;
          timers.clearTimeout(timer);
          abandonWaiters.delete(abandon);
          resolve(outcome);
        };
        const abandon = () => finish({ kind: 'abandoned' });
        const timer = timers.setTimeout(
          () => finish({ kind: 'failed', error: new OutboxPublishTimeoutError(timeoutMs) }),
          timeoutMs,
        );
        abandonWaiters.add(abandon);
        let publishing: Promise<void>;
        try {
          publishing = publisher.publish(message);
        } catch (error) {
          publishing = Promise.reject(error);
        }
        publishing.then(
          () => finish({ kind: 'published' }),
          (error: unknown) => finish({ kind: 'failed', error }),
        );
      });
    },
    abandonAll() {
      for (const abandon of [...abandonWaiters]) abandon();
    },
  };
}
