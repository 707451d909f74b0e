/**
 * Publishes one message with a header table of any size, as the Java and .NET clients can and
 * amqplib cannot (its encoder stops at 64 KiB of headers): a minimal AMQP 0-9-1 client over a
 * plain socket (PLAIN login, one channel in confirm mode, one publish, close). Only for tests that
 * play a foreign producer.
 */
import { connect, type Socket } from 'node:net';

export interface RawPublish {
  readonly url: string;
  readonly exchange: string;
  readonly routingKey: string;
  readonly body: Buffer;
  /** String headers only: enough to send any size. */
  readonly headers: Readonly<Record<string, string>>;
  readonly messageId?: string;
  readonly type?: string;
}

const FRAME_METHOD = 1;
const FRAME_HEADER = 2;
const FRAME_BODY = 3;
const FRAME_END = 0xce;

function shortstr(text: string): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length > 255) throw new RangeError(`shortstr of ${bytes.length} bytes`);
  return Buffer.concat([Buffer.from([bytes.length]), bytes]);
}

function longstr(bytes: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length);
  return Buffer.concat([length, bytes]);
}

function u16(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n);
  return b;
}

function table(headers: Readonly<Record<string, string>>): Buffer {
  const fields = Object.entries(headers).map(([name, value]) =>
    Buffer.concat([shortstr(name), Buffer.from('S'), longstr(Buffer.from(value, 'utf8'))]),
  );
  return longstr(Buffer.concat(fields));
}

function frame(type: number, channel: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(7);
  head.writeUInt8(type, 0);
  head.writeUInt16BE(channel, 1);
  head.writeUInt32BE(payload.length, 3);
  return Buffer.concat([head, payload, Buffer.from([FRAME_END])]);
}

function method(channel: number, classId: number, methodId: number, args: Buffer[]): Buffer {
  return frame(FRAME_METHOD, channel, Buffer.concat([u16(classId), u16(methodId), ...args]));
}

/** Reads whole frames off the socket; `next(classId, methodId)` waits for that method frame. */
class FrameReader {
  private buffered = Buffer.alloc(0);
  private waiting: (() => void) | undefined;
  private failure: Error | undefined;

  constructor(socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, chunk]);
      this.waiting?.();
    });
    const fail = (error: Error) => {
      this.failure = error;
      this.waiting?.();
    };
    socket.on('error', fail);
    socket.on('close', () => fail(new Error('the broker closed the connection')));
  }

  async next(classId: number, methodId: number): Promise<Buffer> {
    for (;;) {
      while (this.buffered.length >= 7) {
        const size = this.buffered.readUInt32BE(3);
        if (this.buffered.length < 8 + size) break;
        const type = this.buffered.readUInt8(0);
        const payload = this.buffered.subarray(7, 7 + size);
        this.buffered = this.buffered.subarray(8 + size);
        if (type !== FRAME_METHOD) continue;
        const [c, m] = [payload.readUInt16BE(0), payload.readUInt16BE(2)];
        if (c === classId && m === methodId) return payload.subarray(4);
        if ((c === 10 && m === 50) || (c === 20 && m === 40))
          throw new Error(
            `the broker closed: ${payload.subarray(7, 7 + payload[6]!).toString('utf8')}`,
          );
      }
      if (this.failure !== undefined) throw this.failure;
      await new Promise<void>((resolve) => (this.waiting = resolve));
    }
  }
}

export async function rawAmqpPublish(message: RawPublish): Promise<void> {
  const url = new URL(message.url);
  const socket = connect(Number(url.port || 5672), url.hostname);
  const reader = new FrameReader(socket);
  try {
    await new Promise<void>((resolve, reject) =>
      socket.once('connect', resolve).once('error', reject),
    );
    socket.write(Buffer.from('AMQP\x00\x00\x09\x01', 'latin1'));
    await reader.next(10, 10); // Connection.Start
    const login = `\0${decodeURIComponent(url.username)}\0${decodeURIComponent(url.password)}`;
    socket.write(
      method(0, 10, 11, [
        longstr(Buffer.alloc(0)),
        shortstr('PLAIN'),
        longstr(Buffer.from(login)),
        shortstr('en_US'),
      ]),
    );
    const tune = await reader.next(10, 30);
    const frameMax = tune.readUInt32BE(2) || 131_072;
    socket.write(method(0, 10, 31, [tune.subarray(0, 2), tune.subarray(2, 6), u16(0)]));
    socket.write(
      method(0, 10, 40, [
        shortstr(decodeURIComponent(url.pathname.slice(1)) || '/'),
        shortstr(''),
        Buffer.from([0]),
      ]),
    );
    await reader.next(10, 41);
    socket.write(method(1, 20, 10, [shortstr('')]));
    await reader.next(20, 11);
    socket.write(method(1, 85, 10, [Buffer.from([0])])); // Confirm.Select
    await reader.next(85, 11);
    socket.write(
      method(1, 60, 40, [
        u16(0),
        shortstr(message.exchange),
        shortstr(message.routingKey),
        Buffer.from([0]),
      ]),
    );
    // Basic properties: headers (0x2000), delivery-mode (0x1000), message-id (0x0080), type (0x0020).
    let flags = 0x2000 | 0x1000;
    const properties = [table(message.headers), Buffer.from([2])];
    if (message.messageId !== undefined) {
      flags |= 0x0080;
      properties.push(shortstr(message.messageId));
    }
    if (message.type !== undefined) {
      flags |= 0x0020;
      properties.push(shortstr(message.type));
    }
    const bodySize = Buffer.alloc(8);
    bodySize.writeBigUInt64BE(BigInt(message.body.length));
    socket.write(
      frame(FRAME_HEADER, 1, Buffer.concat([u16(60), u16(0), bodySize, u16(flags), ...properties])),
    );
    for (let offset = 0; offset < message.body.length; offset += frameMax - 8)
      socket.write(frame(FRAME_BODY, 1, message.body.subarray(offset, offset + frameMax - 8)));
    await reader.next(60, 80); // Basic.Ack
    socket.write(method(0, 10, 50, [u16(200), shortstr('done'), u16(0), u16(0)]));
    await reader.next(10, 51);
  } finally {
    socket.destroy();
  }
}
