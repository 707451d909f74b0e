/**
 * The relay loop runs two lanes, each claiming a batch, publishing it and recording its outcome,
 * then claiming again, within one shared in-flight window. While one lane waits for its claim
 * or its SENT marks, the other publishes, so the database round trips overlap publishing instead
 * of adding to it, and neither lane waits for the other (measured: a loop that claimed the next
 * batch only once the one before the previous had finished was bound by its claims, 0.4–0.6× of
 * a raw confirm channel with the same window). Order per aggregate holds as it does between two
 * relays: a claim takes no row behind one that is not SENT yet, and concurrent claims skip each
 * other's locked rows.
 */
import { IdlePollSchedule, waitWhileIdle } from './idle-poll-schedule.js';
import { observe } from './observe-hook.js';
import { writeSentMarks, type BatchRun, type SentMarks } from './relay-batch.js';
import type { RelayContext } from './relay-context.js';
import type { WakeSignal } from './wake-signal.js';

/**
 * Pauses before a lane tries again to write SENT marks a database failure left unwritten:
 * doubling from the first to the cap (or pollIntervalMs, if shorter) while the writes fail.
 */
const UNWRITTEN_RETRY_MS = { first: 250, cap: 5_000 };

/** Batches in progress at once: one publishes while the other claims or records. */
export const RELAY_LANES = 2;

/**
 * Runs batches until stop() is called; `runBatch` is the relay's own (tracked for stop). A lane
 * that goes again at once lets its next claim statement write the last SENT marks of the batch
 * before (one round trip instead of two between batches); before it waits, it writes them.
 */
export async function runRelayLoop(
  context: RelayContext,
  runBatch: (carried?: SentMarks, handOn?: boolean) => Promise<BatchRun>,
  wakeSignal: WakeSignal,
): Promise<void> {
  const { config, hooks, outage, nowMs, reportError, isStopping } = context;
  const { batchSize, minPollIntervalMs, pollIntervalMs } = config;
  // Full batches finished so far, by any lane.
  let fullBatches = 0;

  const lane = async () => {
    let carried: SentMarks | undefined;
    // Each lane backs off on its own: one lane's empty claims say nothing of the other's rows.
    const idle = new IdlePollSchedule({ floorMs: minPollIntervalMs, ceilingMs: pollIntervalMs });
    let markRetryMs = UNWRITTEN_RETRY_MS.first;
    while (!isStopping()) {
      const fullBefore = fullBatches;
      const batch = await runBatch(carried, true).catch((error: unknown) => {
        reportError(error);
        return undefined;
      });
      carried = batch?.marks;
      const result = batch?.result;
      // A claim that left due rows (ClaimedBatch) counts as full: more is due at once.
      const full = result !== undefined && (result.claimed >= batchSize || batch?.moreDue === true);
      // Work found: more may follow soon, so the next idle wait is short again.
      if (result !== undefined && result.claimed > 0) idle.reset();
      if (full) {
        fullBatches++;
        // A full batch means more is probably due, some of it behind the rows this batch held:
        // a lane that found nothing while they were held looks again.
        wakeSignal.wakeWaiting();
      }
      if (isStopping()) break;
      if (context.unwritten.size === 0) markRetryMs = UNWRITTEN_RETRY_MS.first;
      const outageLeft = outage.until - nowMs();
      // Go again at once after a full batch, or when the other lane finished a full one since
      // this claim began (this claim could not take what that batch held back).
      if (outageLeft <= 0 && (full || fullBatches !== fullBefore)) continue;
      if (carried !== undefined) await writeSentMarks(context, carried);
      carried = undefined;
      // During a broker outage a NOTIFY must not bring the next attempt forward.
      if (outageLeft > 0) await wakeSignal.sleep(outageLeft, true);
      // SENT marks kept from a database failure hold their aggregates back: the next round
      // (which writes them first) comes soon, not after an idle wait of up to pollIntervalMs.
      else if (context.unwritten.size > 0) {
        await wakeSignal.sleep(Math.min(markRetryMs, pollIntervalMs));
        markRetryMs = Math.min(markRetryMs * 2, UNWRITTEN_RETRY_MS.cap);
      } else await waitWhileIdle(idle, wakeSignal, (ms) => observe(() => hooks.onIdle?.(ms)));
    }
    if (carried !== undefined) await writeSentMarks(context, carried);
  };
  await Promise.all(Array.from({ length: RELAY_LANES }, lane));
}
