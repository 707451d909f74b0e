/** The in-process broker's dead-letter source: its `deadLettered` list and `replayDeadLetters`. */
import {
  deadLetterRecord,
  type DeadLetterRecord,
  type DeadLetterSource,
} from '../delivery/dead-letter-source.js';
import type { InProcessBroker } from './in-process-broker.js';
import type { InProcessDeadLetter } from './in-process-records.js';

function fromInProcess(letter: InProcessDeadLetter): DeadLetterRecord {
  const { message } = letter;
  return deadLetterRecord({
    transport: 'in-process',
    consumer: letter.consumer,
    // A foreign producer's message may carry no messageId property (then it is '').
    messageId: message.messageId === '' ? undefined : message.messageId,
    eventType: message.eventType,
    diagnostics: {
      errorType: letter.errorType,
      errorMessage: letter.errorMessage,
      attempts: letter.attempts,
      firstFailureAt: letter.firstFailureAt,
      deadLetteredAt: letter.deadLetteredAt,
      traceId: message.headers.traceId,
      replays: letter.replays,
    },
    origin: undefined,
    headers: message.headers,
    body: message.body,
  });
}

export function inProcessDeadLetterSource(broker: InProcessBroker): DeadLetterSource {
  const of = (consumer: string) =>
    broker.deadLettered.filter((letter) => letter.consumer === consumer);
  return {
    transport: 'in-process',
    list: (consumer) => Promise.resolve(of(consumer).map(fromInProcess)),
    replay(consumer, select) {
      const letters = of(consumer);
      const chosen = new Set(letters.filter((letter) => select(fromInProcess(letter))));
      broker.replayDeadLetters((letter) => chosen.has(letter));
      return Promise.resolve({
        replayed: [...chosen].map((letter) => letter.message.messageId),
        kept: letters.length - chosen.size,
      });
    },
    missing: () => [],
    close: () => Promise.resolve(),
  };
}
