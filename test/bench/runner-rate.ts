/**
 * The runner side of the consumer benches: a consumer runner started on messages already in its
 * topic, timed until it handled `count` of them. A dead letter fails the sample: a message the
 * runner could not place would be counted as read.
 */
import { timed, until } from './bench-timing.js';

/** What the sample needs of a runner (every transport's DeliveryRunner has it). */
interface BenchRunner {
  start(): Promise<void>;
  stop(): Promise<void>;
  metrics(): { readonly handled: number; readonly deadLettered: number };
}

/** Messages/s of `runner` over its first `count` messages; it is stopped afterwards. */
export async function runnerRate(runner: BenchRunner, count: number): Promise<number> {
  try {
    return (
      count /
      (await timed(async () => {
        await runner.start();
        await until('the runner to handle every message', () => runner.metrics().handled >= count);
        if (runner.metrics().deadLettered > 0)
          throw new Error(`${runner.metrics().deadLettered} bench messages dead-lettered`);
      }))
    );
  } finally {
    await runner.stop();
  }
}
