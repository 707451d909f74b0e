/**
 * Whether the place a relay publishes to exists (a Kafka topic, a RabbitMQ exchange), asked
 * before the first publish to it. A broker that does not create topics itself
 * (`auto.create.topics.enable=false`, the usual production setting) answers a send to a missing
 * topic only after the client's metadata retries, and RabbitMQ closes the channel of a publish to
 * a missing exchange: either way the publish failed as if the broker were down, and on the
 * relay's one producer or channel it took every other event type's messages with it, so nothing
 * at all was published until the topic or exchange existed. Now a message for a missing place
 * fails at once, on its own, as a retryable failure of that row (KafkaTopicMissingError in
 * kafka/topic-lookup.ts, RabbitExchangeMissingError in rabbitmq/errors.ts), and the rest keep
 * going.
 */

/** How long an answer "missing" is believed before the broker is asked again, ms. */
export const MISSING_DESTINATION_RECHECK_MS = 5_000;

/**
 * Answers of `exists`, remembered: a name found is never asked about again, a missing one again
 * after MISSING_DESTINATION_RECHECK_MS; one question per name at a time. A lookup that fails
 * (the broker unreachable) is passed on and not remembered.
 */
export class DestinationPresence {
  private readonly found = new Set<string>();
  private readonly missingSince = new Map<string, number>();
  private readonly asking = new Map<string, Promise<void>>();

  constructor(
    private readonly exists: (name: string) => Promise<boolean>,
    private readonly missing: (name: string) => Error,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** `true` when `name` is known to exist; else a promise that rejects when it does not. */
  require(name: string): true | Promise<void> {
    if (this.found.has(name)) return true;
    const since = this.missingSince.get(name);
    if (since !== undefined && this.now() - since < MISSING_DESTINATION_RECHECK_MS)
      return Promise.reject(this.missing(name));
    let asked = this.asking.get(name);
    if (asked === undefined) {
      asked = this.exists(name)
        .then((exists) => {
          if (exists) {
            this.found.add(name);
            this.missingSince.delete(name);
          } else {
            this.missingSince.set(name, this.now());
            throw this.missing(name);
          }
        })
        .finally(() => this.asking.delete(name));
      this.asking.set(name, asked);
    }
    return asked;
  }
}
