/**
 * A Publisher that keeps what it is given, for tests and local development. It can be told to
 * fail (to exercise retries) or to hang (to simulate a relay that dies holding a lease).
 */
import type { OutboundMessage, Publisher } from '../publisher.js';

/** Decides per call: return an error to reject with it, `'hang'` to never settle, or nothing to accept. */
export type PublishBehaviour = (
  message: OutboundMessage,
  call: number,
) => Error | 'hang' | undefined;

export class RecordingPublisher implements Publisher {
  /** Accepted messages, in the order publish() was called. */
  readonly published: OutboundMessage[] = [];
  /** Every call, accepted or not. */
  readonly calls: OutboundMessage[] = [];
  private waiters: { done: () => boolean; resolve: () => void }[] = [];

  constructor(private behaviour: PublishBehaviour = () => undefined) {}

  /** Replaces the behaviour (e.g. stop failing). */
  behave(behaviour: PublishBehaviour): void {
    this.behaviour = behaviour;
  }

  async publish(message: OutboundMessage): Promise<void> {
    const call = this.calls.push(message);
    this.notifyWaiters();
    const outcome = this.behaviour(message, call);
    if (outcome === 'hang') return new Promise<void>(() => undefined);
    if (outcome !== undefined) throw outcome;
    this.published.push(message);
    this.notifyWaiters();
  }

  /** Resolves once at least `count` messages were accepted. */
  waitForPublished(count: number): Promise<void> {
    return this.waitFor(() => this.published.length >= count);
  }

  /** Resolves once publish() was called at least `count` times. */
  waitForCalls(count: number): Promise<void> {
    return this.waitFor(() => this.calls.length >= count);
  }

  private waitFor(done: () => boolean): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ done, resolve }));
  }

  private notifyWaiters(): void {
    const ready = this.waiters.filter((waiter) => waiter.done());
    this.waiters = this.waiters.filter((waiter) => !waiter.done());
    for (const waiter of ready) waiter.resolve();
  }
}
