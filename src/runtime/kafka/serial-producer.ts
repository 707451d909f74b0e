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
 *
 * Each send is bounded by `timeoutMs`, the connect of that new producer included: connecting to
 * a broker that does not answer (paused, overloaded) is bounded only by the library's request
 * timeout and connect retries (30 s and more), and every send queued behind it would wait that
 * long. A connect that outlives the send that started it goes on: the next send or probe waits
 * for the same one (a connect slower than `timeoutMs` still ends the outage), and one that
 * settles after close() is closed.
 */
import type { KafkaOutboundRecord } from './kafka-client.js';
import { withTimeout } from './send-timeout.js';

/** How one adapter connects, sends on and closes its library's producer. */
interface ClientProducerLifecycle<P> {
  /** A connected producer with its own producer id. */
  connect(): Promise<P>;
  /**
   * One send; rejects when not every record was acknowledged. The serial producer gives up on
   * it at `deadline` (epoch ms): the library's own retries should stop by then.
   */
  send(producer: P, records: readonly KafkaOutboundRecord[], deadline: number): Promise<void>;
  close(producer: P): Promise<void>;
}

interface SerialProducer {
  /** Rejects with `KafkaTimeoutError` when not acknowledged within `timeoutMs`, connect included. */
  readonly send: (records: readonly KafkaOutboundRecord[]) => Promise<void>;
  /**
   * Connects a producer if there is none (after a failed send); queued like a send and bounded
   * by `timeoutMs` like one.
   */
  readonly probe: () => Promise<void>;
  readonly close: () => Promise<void>;
}

/** Connects the first producer at once, so a send right after does not race the connect. */
export async function serialProducer<P>(
  lifecycle: ClientProducerLifecycle<P>,
  timeoutMs: number,
): Promise<SerialProducer> {
  let producer: P | undefined = await lifecycle.connect();
  /** The connect in flight, shared by every send and probe that waits for a producer. */
  let connecting: Promise<P> | undefined;
  let tail: Promise<unknown> = Promise.resolve();
  let closed = false;
  const closedError = () => new Error('kafka producer is closed');
  const closeQuietly = (current: P) => void lifecycle.close(current).catch(() => undefined);

  const connected = (): Promise<P> => {
    if (closed) return Promise.reject(closedError());
    if (producer !== undefined) return Promise.resolve(producer);
    connecting ??= lifecycle.connect().then(
      (created) => {
        connecting = undefined;
        if (closed) {
          closeQuietly(created);
          throw closedError();
        }
        producer = created;
        return created;
      },
      (error: unknown) => {
        connecting = undefined;
        throw error;
      },
    );
    return connecting;
  };

  const sendNow = async (records: readonly KafkaOutboundRecord[]) => {
    if (closed) throw closedError();
    const deadline = Date.now() + timeoutMs;
    let gaveUp = false;
    /** The producer the records went out on, once they did. */
    let sentOn: P | undefined;
    const attempt = async () => {
      const current = await connected();
      // Connected after this send gave up: its records must not go out beside the next send's.
      if (gaveUp) return;
      sentOn = current;
      await lifecycle.send(current, records, deadline);
    };
    try {
      await withTimeout(
        attempt(),
        timeoutMs,
        `kafka send of ${records.length} record(s)`,
        () => (gaveUp = true),
      );
    } catch (error) {
      if (sentOn !== undefined && producer === sentOn) {
        // Its numbering may disagree with the broker's now: the next send starts on a new producer.
        producer = undefined;
        closeQuietly(sentOn);
      }
      throw error;
    }
  };

  const enqueue = <T>(task: () => Promise<T>): Promise<T> => {
    const run = tail.then(task);
    tail = run.catch(() => undefined);
    return run;
  };

  return {
    send: (records) => {
      if (records.length === 0) return Promise.resolve();
      return enqueue(() => sendNow(records));
    },
    probe: () =>
      enqueue(async () => {
        await withTimeout(connected(), timeoutMs, 'kafka producer connect');
      }),
    close: async () => {
      closed = true;
      // A send in flight rejects when its producer closes; queued ones reject as closed; a
      // connect in flight closes its producer when it settles.
      const current = producer;
      producer = undefined;
      if (current !== undefined) await lifecycle.close(current);
    },
  };
}
