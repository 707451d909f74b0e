/**
 * stop() during a rebalance, on the real broker and the real PostgreSQL, for every client adapter:
 * a member is stopped (SIGTERM) while the group waits for a SIGKILLed member's session to expire
 * and a new member joins, as in a rolling deploy that replaces a crashed instance. The stop may
 * wait for a commit the rebalance holds up, but only as long as the Kafka guide says (the commit
 * timeout, 10 s, then the leave, 5 s; in runs here it returned in milliseconds, the commit
 * held up by a rebalance is covered with fake timers in offset-committer.test.ts), and nothing is
 * lost or applied twice: the remaining member takes every partition, the inbox absorbs what the
 * stopped member handled but did not commit, and the group's offsets reach the end.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { KAFKA_CLIENTS } from '../support/kafka/test-kafka.js';
import { consumerGroup, type ConsumerGroup } from './support/consumer-group.js';
import { waitFor } from './support/inventory-on-kafka.js';

/** The smallest session timeout the broker allows: the killed member is expelled soonest. */
const SESSION_TIMEOUT_MS = 6_000;
/** The guide's bound: the flush's commit timeout (10 s) and the adapter's leave (5 s). */
const STOP_BOUND_MS = 10_000 + 5_000;
const EVENTS = 600;
const STALL_MS = 45_000;

describe.each(KAFKA_CLIENTS)('stop() during a rebalance ($name)', (adapter) => {
  let group: ConsumerGroup | undefined;

  afterEach(async () => {
    await group?.cleanup();
    group = undefined;
  });

  it('returns within the commit timeout and the leave; 0 lost, 0 applied twice, offsets to the end', async () => {
    const g = (group = await consumerGroup({
      adapter,
      mode: 'plain',
      partitions: 6,
      handlerDelayMs: 5,
      sessionTimeoutMs: SESSION_TIMEOUT_MS,
    }));
    const stopping = await g.start();
    const crashing = await g.start();
    // A steady stream, so the members have commits going when the rebalance comes.
    const publishing = g.publish(EVENTS, 24, { batch: 10, intervalMs: 100 });
    await g.waitForEffects(EVENTS / 5, STALL_MS);
    await g.kill(crashing);
    // The replacement joins; the group then waits for the killed member's session to expire.
    const replacement = g.start();
    await waitFor(
      async () => (await g.groupState()).state === 'PreparingRebalance',
      SESSION_TIMEOUT_MS + 10_000,
      'the group rebalancing after the replacement joined',
    );
    const stoppedIn = await g.terminate(stopping);
    expect(stoppedIn, stopping.output).toBeLessThan(STOP_BOUND_MS);
    const remaining = await replacement;

    await publishing;
    await g.waitForEffects(EVENTS, STALL_MS);
    await waitFor(() => g.committedToEnd(), 60_000, 'offsets committed to the end');
    const report = await g.check();
    expect(report.lost, 'messages without effect').toEqual([]);
    expect(report.doubled, 'messages with two effects').toEqual([]);
    expect(report.effects).toBe(EVENTS);
    expect(await g.deadLetters()).toBe(0);
    expect(remaining.process.exitCode, remaining.output).toBeNull();
  }, 300_000);
});
