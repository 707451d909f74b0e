/**
 * How long an idle relay lane waits before it claims again, where no NOTIFY wakes it (MySQL and
 * MariaDB have no LISTEN/NOTIFY; a data-layer Database cannot LISTEN). Right after a claim found
 * work, or a wake-up, more work is likely soon: the lane looks again after `floorMs`. Each claim
 * that finds nothing doubles the wait, up to `ceilingMs`, so a quiet outbox costs one claim per
 * ceiling, while a row committed by another process during steady traffic waits about the floor.
 * Pure: it counts rounds, the caller sleeps.
 */

interface IdlePollOptions {
  /** First wait after work was found or a wake-up arrived, ms. */
  readonly floorMs: number;
  /** Longest wait, ms: the worst-case delay before a row committed elsewhere is claimed. */
  readonly ceilingMs: number;
}

export class IdlePollSchedule {
  private nextMs: number;

  constructor(private readonly options: IdlePollOptions) {
    checkIdlePollOptions(options);
    this.nextMs = options.floorMs;
  }

  /** The wait before the next claim; each call (an idle round) doubles the one after it, up to the ceiling. */
  next(): number {
    const wait = this.nextMs;
    this.nextMs = Math.min(this.options.ceilingMs, wait * 2);
    return wait;
  }

  /** Work was found or a wake-up arrived: the next wait is the floor again. */
  reset(): void {
    this.nextMs = this.options.floorMs;
  }
}

/** Throws a RangeError naming the bad option. */
export function checkIdlePollOptions({ floorMs, ceilingMs }: IdlePollOptions): void {
  for (const [name, value] of [
    ['minPollIntervalMs', floorMs],
    ['pollIntervalMs', ceilingMs],
  ] as const) {
    if (!Number.isFinite(value) || value <= 0)
      throw new RangeError(`${name} must be a positive number, got ${value}`);
  }
  if (floorMs > ceilingMs) {
    throw new RangeError(
      `minPollIntervalMs (${floorMs}) must not exceed pollIntervalMs (${ceilingMs}): the idle wait grows from the first to the second`,
    );
  }
}

/**
 * One idle round of a relay lane: waits the schedule's next delay (told to `onWait` first) on
 * `signal`, which a wake-up ends early; a wake-up also resets the schedule. Resolves whether
 * it was woken.
 */
export async function waitWhileIdle(
  schedule: IdlePollSchedule,
  signal: { sleep(ms: number): Promise<boolean> },
  onWait?: (ms: number) => void,
): Promise<boolean> {
  const wait = schedule.next();
  onWait?.(wait);
  const woken = await signal.sleep(wait);
  if (woken) schedule.reset();
  return woken;
}
