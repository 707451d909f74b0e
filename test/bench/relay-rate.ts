/**
 * The relay side of the transport benches: the relay at its defaults, started on rows already
 * written, as it runs in a service (its loop claims the next batch while one publishes), timed
 * until every row is published.
 */
import { createOutboxRelay, type Database, type Publisher } from '../../src/runtime/index.js';
import { timed } from './bench-timing.js';

/** Events/s of the relay publishing `count` written rows through `publisher`; a failed send fails the sample. */
export async function relayRate(options: {
  readonly db: Database;
  readonly schema: string;
  readonly publisher: Publisher;
  readonly count: number;
  /** Names the bench in the error of a failed send. */
  readonly bench: string;
  /** Each idle wait the relay's lanes took (ms), for a bench's trace. */
  readonly onIdle?: (waitMs: number) => void;
}): Promise<number> {
  const { count } = options;
  let published = 0;
  let done!: () => void;
  let failed!: (error: Error) => void;
  const allPublished = new Promise<void>((resolve, reject) => {
    done = resolve;
    failed = reject;
  });
  const relay = createOutboxRelay({
    db: options.db,
    schema: options.schema,
    notifyChannel: false,
    publisher: options.publisher,
    hooks: {
      onFailed: (_message, failure) =>
        failed(new Error(`${options.bench}: a send failed: ${String(failure.error)}`)),
      ...(options.onIdle !== undefined ? { onIdle: options.onIdle } : {}),
      onPublished: () => {
        if (++published >= count) done();
      },
    },
  });
  try {
    return (
      count /
      (await timed(async () => {
        await relay.start();
        await allPublished;
      }))
    );
  } finally {
    await relay.stop();
  }
}
