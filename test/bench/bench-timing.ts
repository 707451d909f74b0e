/** How the benches time a side: wall seconds of one piece of work, and polling for its end. */

/** Seconds `work` took (monotonic clock). */
export async function timed(work: () => Promise<void>): Promise<number> {
  const start = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

/**
 * Polls `done` every `pollMs` until it is true: 5 ms by default (short: the poll is inside the
 * timed span); longer where the poll's own CPU would be measured.
 */
export async function until(
  what: string,
  done: () => boolean,
  timeoutMs = 300_000,
  pollMs = 5,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
