/**
 * The send discipline both adapters' idempotent producers follow: one send in flight at a time,
 * and a new client producer (a new producer id) after any send that did not resolve.
 *
 * Why: an idempotent producer numbers each partition's records; the broker stores a batch only
 * if its first number follows the last one stored, and answers a batch whose numbers it has
 * already seen as a success without storing it again. A client that gives up on a request (a
 * timeout while the broker was paused) cannot know whether the broker stored it, and kafkajs then
 * hands the same numbers to the next batch: if that is a different send, the broker takes it for
 * the stored one and acknowledges records it never stores (measured under broker stalls:
 * acknowledged records lost, another record stored twice), or refuses it as out of order. So
 * no other send may start while one is unsettled, and after a failed send the numbering starts
 * afresh on a new producer id: records the old one may still deliver are duplicates, which the
 * consumers' inbox absorbs; nothing is acknowledged unsent.
 */
import type { KafkaOutboundRecord } from './kafka-client.js';

/** How one adapter connects, sends on and closes its library's producer. */
export interface ClientProducerLifecycle<P> {
  /** A connected producer with its own producer id. */
  connect(): Promise<P>;
  /** One send, bounded in time; rejects when not every record was acknowledged. */
  send(producer: P, records: readonly KafkaOutboundRecord[]): Promise<void>;
  close(producer: P): Promise<void>;
}

export interface SerialProducer {
  readonly send: (records: readonly KafkaOutboundRecord[]) => Promise<void>;
  /** Connects a producer if there is none (after a failed send); queued like a send. */
  readonly probe: () => Promise<void>;
  readonly close: () => Promise<void>;
}

/** Connects the first producer at once, so a send right after does not race the connect. */
export async function serialProducer<P>(
  lifecycle: ClientProducerLifecycle<P>,
): Promise<SerialProducer> {
  let producer: P | undefined = await lifecycle.connect();
  let tail: Promise<unknown> = Promise.resolve();
  let closed = false;

  const sendNow = async (records: readonly KafkaOutboundRecord[]) => {
    if (closed) throw new Error('kafka producer is closed');
    producer ??= await lifecycle.connect();
    const current = producer;
    try {
      await lifecycle.send(current, records);
    } catch (error) {
      // Its numbering may disagree with the broker's now: the next send starts on a new producer.
      producer = undefined;
      void lifecycle.close(current).catch(() => undefined);
      throw error;
    }
  };

  return {
    send: (records) => {
      if (records.length === 0) return Promise.resolve();
      const run = tail.then(() => sendNow(records));
      tail = run.catch(() => undefined);
      return run;
    },
    probe: () => {
      const run = tail.then(async () => {
        if (closed) throw new Error('kafka producer is closed');
        producer ??= await lifecycle.connect();
      });
      tail = run.catch(() => undefined);
      return run;
    },
    close: async () => {
      closed = true;
      // A send in flight rejects when its producer closes; queued ones reject as closed.
      const current = producer;
      producer = undefined;
      if (current !== undefined) await lifecycle.close(current);
    },
  };
}
