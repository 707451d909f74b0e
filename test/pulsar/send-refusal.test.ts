/**
 * How the WebSocket route classifies a send the broker's WebSocket service answered with an
 * error (`send-error:<code>`): the message's fault (DEAD after the relay's attempts) only for a
 * frame the service could not read or a broker-side refusal of the message itself; any other
 * failure of the broker-side producer is unavailability (an outage: the row waits, never DEAD).
 * The errorMsg texts are as Pulsar 4.2.4's WebSocket service sent them on this machine (the
 * timeout after a SIGSTOP/SIGCONT of the broker; the others in the form the Java client words them).
 */
import { describe, expect, it } from 'vitest';
import { sendRefusal } from '../../src/runtime/pulsar/websocket-client.js';

const TOPIC = 'persistent://public/default/orders';
const TIMEOUT =
  'org.apache.pulsar.client.api.PulsarClientException$TimeoutException: The producer standalone-0-7 can not send message to the topic persistent://public/default/orders within given timeout : createdAt 8.302 seconds ago, firstSentAt 8.302 seconds ago, lastSentAt 8.302 seconds ago, retryCount 1';
const TOO_LARGE =
  'org.apache.pulsar.client.api.PulsarClientException$InvalidMessageException: The producer standalone-0-7 of the topic persistent://public/default/orders sends a message with 6291456 bytes that exceeds 5242880 bytes';

describe('a send the broker answered with an error', () => {
  it.each([
    [
      'the broker-side producer timed out (after a pause of the broker)',
      'send-error:8',
      TIMEOUT,
      true,
    ],
    ['the broker-side producer failed without a message', 'send-error:8', undefined, true],
    ['the broker-side producer could not create its producer', 'send-error:1', 'x', true],
    ['the broker refused the message itself (too large)', 'send-error:8', TOO_LARGE, false],
    ['the frame was not JSON the service reads', 'send-error:3', 'Unexpected character', false],
    ['the payload was not base64', 'send-error:7', 'Illegal base64 character', false],
    ['an answer without a code', 'failed', 'x', false],
    ['no result at all', undefined, undefined, false],
  ] as const)('%s: unavailable %s', (_case, result, errorMsg, unavailable) => {
    const error = sendRefusal(TOPIC, {
      ...(result !== undefined ? { result } : {}),
      ...(errorMsg !== undefined ? { errorMsg } : {}),
    });
    expect(error.unavailable).toBe(unavailable);
    expect(error.retryable).toBe(unavailable);
    expect(error.message).toContain(TOPIC);
    if (errorMsg !== undefined) expect(error.message).toContain(errorMsg);
  });
});
