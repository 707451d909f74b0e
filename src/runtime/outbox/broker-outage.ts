/**
 * The relay's view of a broker outage, shared by every batch so one outage holds back all of
 * them. The backoff grows per failed ROUND, not per failed row: the publishes in flight when the
 * broker went away all fail together, and counting each as a step parked the relay for 30 s and
 * more after a blip of 300 ms (8 rows in flight = 8 doublings). A round is every publish started
 * since the last step: a failure of a publish started before it belongs to that step. A confirmed
 * publish ends the outage at once, and so does the broker's reconnect (seen by the relay's probe,
 * outage-probe.ts), however large the backoff had grown.
 */
export class BrokerOutage {
  /** Failed rounds in a row; 0 when the broker is healthy. */
  streak = 0;
  /** Epoch ms before which no publish starts. */
  until = 0;
  /** Epoch ms of the first failed round of this outage (undefined when healthy); health reports it. */
  since: number | undefined;
  /** Changes with every step and with the end of an outage. */
  #round = 0;
  /** The delay of the current step, given to every row that fails in it. */
  #delay = 0;

  /**
   * @param onEnd called when a confirmed publish or a reconnect ended an outage (wakes the
   *   waiting lanes).
   * @param onStep called when a failed round started a step (the relay starts its probe).
   */
  constructor(
    private readonly onEnd: () => void = () => undefined,
    private readonly onStep: () => void = () => undefined,
  ) {}

  /** The round a publish starting now belongs to; pass it to `failed()` if it fails. */
  get round(): number {
    return this.#round;
  }

  /**
   * A publish of `round` failed for broker unavailability. The first failure of a round is one
   * step (`delayFor(streak)` from now); later failures of it share that step. Returns the
   * step's delay (how long the failed row waits).
   */
  failed(round: number, nowMs: number, delayFor: (streak: number) => number): number {
    if (this.streak === 0 || round === this.#round) {
      if (this.streak === 0) this.since = nowMs;
      this.streak++;
      this.#round++;
      this.#delay = delayFor(this.streak);
      this.until = Math.max(this.until, nowMs + this.#delay);
      this.onStep();
    }
    return this.#delay;
  }

  /** A publish was confirmed, or the broker reconnected: it is back, whatever the backoff said. */
  succeeded(): void {
    this.since = undefined;
    if (this.streak === 0 && this.until === 0) return;
    const waiting = this.until > 0;
    this.streak = 0;
    this.until = 0;
    this.#round++;
    if (waiting) this.onEnd();
  }
}
