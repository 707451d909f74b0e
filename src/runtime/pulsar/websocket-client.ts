/**
 * evgen's Pulsar interface over the broker's WebSocket API (`/ws/v2/...`, JSON frames) with `ws`:
 * pure JavaScript, nothing native. The broker must run its WebSocket service
 * (`webSocketServiceEnabled=true` in broker.conf, or a separate WebSocket proxy); the broker-side
 * Java client then does the work, so keys, properties, Key_Shared, negative acks and the
 * dead-letter policy behave exactly as Java's.
 *
 * - A producer is one socket; each send carries a context the broker echoes with the stored
 *   message id (or an error). A dropped socket rejects every pending send; the next send
 *   reconnects.
 * - A consumer is one socket per topic in pull mode: the broker delivers only as many messages as
 *   it was granted permits, one permit is returned per settled message, so at most `maxUnsettled`
 *   per topic are handed out unsettled. A dropped socket reconnects with backoff; acks for
 *   messages of the old socket are dropped (the broker redelivers those, the inbox absorbs them).
 */
// Types only: `ws` is an optional peer, loaded by the first socket a Pulsar client opens, so a
// service without Pulsar never installs it.
import type WebSocket from 'ws';
import { UnpublishableMessageError } from '../transport-limits.js';
import {
  parseTopicName,
  PulsarClientError,
  type PulsarClient,
  type PulsarConsumer,
  type PulsarConsumerHandlers,
  type PulsarConsumerOptions,
  type PulsarInboundMessage,
  type PulsarOutboundMessage,
  type PulsarProducer,
  type PulsarProducerOptions,
} from './pulsar-client.js';

/** `WebSocket.OPEN` and `WebSocket.CLOSED` (the readyState values of the WHATWG API `ws` follows). */
const SOCKET_OPEN = 1;
const SOCKET_CLOSED = 3;

/** Where the broker's WebSocket API is. */
export interface PulsarWebSocketConnection {
  /** The broker's (or WebSocket proxy's) HTTP base URL, e.g. `http://127.0.0.1:8080`. */
  readonly webServiceUrl: string;
  /** Extra handshake headers, e.g. `{ Authorization: 'Bearer <token>' }`. */
  readonly headers?: Readonly<Record<string, string>>;
  /** How long opening one socket may take (default 10 000 ms). */
  readonly connectTimeoutMs?: number;
  /**
   * The largest text frame the broker's WebSocket service accepts (`webSocketMaxTextFrameSize`,
   * default 1 048 576 bytes). A send whose frame (base64 payload, key, properties) is larger is
   * refused before anything is sent, with `UnpublishableMessageError`: the broker would close the
   * socket on it, failing every send in flight with it, and again on every retry.
   */
  readonly maxFrameBytes?: number;
}

/** Pulsar's default `webSocketMaxTextFrameSize`. */
export const DEFAULT_PULSAR_MAX_FRAME_BYTES = 1_048_576;

/** The WebSocket route: evgen's Pulsar interface, and the sockets it holds. */
export interface PulsarWebSocketClient extends PulsarClient {
  /**
   * Sockets of this client's producers and consumers open now (one per producer, one per topic
   * of a consumer): what a stopped runner must have closed, for health checks and tests.
   */
  openSockets(): number;
}

/** A Pulsar client over the broker's WebSocket API. */
export function pulsarWebSocketClient(
  connection: PulsarWebSocketConnection,
): PulsarWebSocketClient {
  const base = connection.webServiceUrl.replace(/^http/, 'ws').replace(/\/+$/, '');
  let sockets = 0;
  const open = async (path: string, query: Record<string, string | number | undefined>) => {
    const socket = await openSocket(`${base}/ws/v2/${path}${queryString(query)}`, connection);
    sockets++;
    socket.once('close', () => sockets--);
    return socket;
  };
  return {
    name: 'websocket',
    openSockets: () => sockets,
    async producer(topic, options = {}) {
      const maxFrameBytes = connection.maxFrameBytes ?? DEFAULT_PULSAR_MAX_FRAME_BYTES;
      const producer = new WebSocketProducer(topic, options, maxFrameBytes, () =>
        open(`producer/${topicPath(topic)}`, {
          sendTimeoutMillis: options.sendTimeoutMs ?? 30_000,
          producerName: options.producerName,
          // One message per entry: the broker-side producer acknowledges each send on its own.
          batchingEnabled: 'false',
        }),
      );
      await producer.connect();
      return producer;
    },
    consumer(options) {
      return new WebSocketConsumer(options, (topic) =>
        open(`consumer/${topicPath(topic)}/${encodeURIComponent(options.subscription)}`, {
          subscriptionType: options.subscriptionType ?? 'Key_Shared',
          subscriptionInitialPosition: options.initialPosition ?? 'Earliest',
          pullMode: 'true',
          receiverQueueSize: Math.max(
            1,
            Math.min(options.prefetch ?? options.maxUnsettled ?? 100, 1000),
          ),
          negativeAckRedeliveryDelay: options.negativeAckRedeliveryDelayMs ?? 1_000,
          maxRedeliverCount: options.deadLetter?.maxRedeliverCount,
          deadLetterTopic: options.deadLetter?.topic,
          consumerName: options.consumerName,
        }),
      );
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Producer

interface PendingSend {
  resolve(messageId: string): void;
  reject(error: Error): void;
  timer: ReturnType<typeof setTimeout>;
}

class WebSocketProducer implements PulsarProducer {
  #socket: WebSocket | undefined;
  #connecting: Promise<WebSocket> | undefined;
  #closed = false;
  #context = 0;
  readonly #pending = new Map<string, PendingSend>();
  readonly #sendTimeoutMs: number;

  constructor(
    readonly topic: string,
    options: PulsarProducerOptions,
    private readonly maxFrameBytes: number,
    private readonly openSocket: () => Promise<WebSocket>,
  ) {
    this.#sendTimeoutMs = options.sendTimeoutMs ?? 30_000;
    if (!Number.isInteger(this.#sendTimeoutMs) || this.#sendTimeoutMs <= 0) {
      throw new RangeError(`sendTimeoutMs must be a positive integer (got ${this.#sendTimeoutMs})`);
    }
  }

  async connect(): Promise<WebSocket> {
    if (this.#closed) throw new PulsarClientError(`producer for ${this.topic} is closed`, false);
    if (this.#socket?.readyState === SOCKET_OPEN) return this.#socket;
    this.#connecting ??= this.openSocket()
      .then((socket) => {
        socket.on('message', (data) => this.#onReply(frameText(data)));
        socket.on('close', () => this.#onClose(socket));
        socket.on('error', () => undefined); // 'close' follows and rejects what is pending
        this.#socket = socket;
        return socket;
      })
      .finally(() => {
        this.#connecting = undefined;
      });
    return this.#connecting;
  }

  async ready(): Promise<void> {
    await this.connect();
  }

  async send(message: PulsarOutboundMessage): Promise<string> {
    const context = String(++this.#context);
    const frame = JSON.stringify({
      payload: message.payload.toString('base64'),
      properties: message.properties ?? {},
      key: message.key,
      context,
      ...(message.deliverAfterMs !== undefined && message.deliverAfterMs > 0
        ? { deliverAfterMs: Math.ceil(message.deliverAfterMs) }
        : {}),
    });
    const frameBytes = Buffer.byteLength(frame, 'utf8');
    if (frameBytes > this.maxFrameBytes) {
      throw new UnpublishableMessageError(message.properties?.messageId ?? '?', [
        {
          pointer: '',
          keyword: 'maxLength',
          message: `is ${frameBytes} bytes as a WebSocket frame (payload in base64, key, properties); the broker's WebSocket service takes at most ${this.maxFrameBytes} (webSocketMaxTextFrameSize)`,
        },
      ]);
    }
    const socket = await this.connect();
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(context);
        reject(
          new PulsarClientError(
            `send to ${this.topic} not acknowledged within ${this.#sendTimeoutMs} ms`,
            true,
          ),
        );
      }, this.#sendTimeoutMs);
      this.#pending.set(context, { resolve, reject, timer });
      socket.send(frame, (error) => {
        if (error) this.#settle(context, undefined, unavailable(`send to ${this.topic}`, error));
      });
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    const socket = this.#socket ?? (await this.#connecting?.catch(() => undefined));
    if (socket) await closeSocket(socket);
  }

  #onReply(text: string): void {
    let reply: { result?: string; messageId?: string; context?: string; errorMsg?: string };
    try {
      reply = JSON.parse(text) as typeof reply;
    } catch {
      return;
    }
    if (reply.context === undefined) return;
    if (reply.result === 'ok' && typeof reply.messageId === 'string') {
      this.#settle(reply.context, reply.messageId);
    } else {
      this.#settle(reply.context, undefined, sendRefusal(this.topic, reply));
    }
  }

  #settle(context: string, messageId: string | undefined, error?: Error): void {
    const pending = this.#pending.get(context);
    if (!pending) return;
    this.#pending.delete(context);
    clearTimeout(pending.timer);
    if (messageId !== undefined) pending.resolve(messageId);
    else pending.reject(error ?? new PulsarClientError('send failed', true));
  }

  #onClose(socket: WebSocket): void {
    if (this.#socket === socket) this.#socket = undefined;
    for (const context of [...this.#pending.keys()]) {
      this.#settle(
        context,
        undefined,
        new PulsarClientError(
          `connection for ${this.topic} closed before the broker acknowledged`,
          true,
        ),
      );
    }
  }
}

/**
 * The Java client exceptions, as the broker's WebSocket service passes them on in `errorMsg`, that
 * are about the message itself: the same bytes fail the same way every time.
 */
const MESSAGE_EXCEPTIONS = /\$(InvalidMessageException|ChecksumException|CryptoException)\b/;

/**
 * A send the broker's WebSocket service answered with an error (`send-error:<code>`, the codes of
 * its WebSocketError), as the error the send rejects with. The message's own fault only for a
 * frame it could not read (3, FailedToDeserializeFromJSON; 7, PayloadEncodingError) or a
 * broker-side refusal of the message (8, UnknownError, naming one of MESSAGE_EXCEPTIONS); any
 * other failure of the broker-side producer is unavailability. That producer times out sends of
 * its own: after a pause of the broker (SIGSTOP, a long GC) it fails what it held with
 * `PulsarClientException$TimeoutException` (measured on Pulsar 4.2.4), and counted against the
 * message those made rows DEAD and blocked their aggregates. An answer without a code is taken
 * as the message's: a refusal nothing marks as passing must not hold every aggregate back the way
 * an outage does.
 */
export function sendRefusal(
  topic: string,
  reply: { readonly result?: string; readonly errorMsg?: string },
): PulsarClientError {
  const code = /^send-error:(\d+)$/.exec(reply.result ?? '')?.[1];
  const aboutMessage =
    code === undefined ||
    code === '3' ||
    code === '7' ||
    (code === '8' && MESSAGE_EXCEPTIONS.test(reply.errorMsg ?? ''));
  return new PulsarClientError(
    `broker refused the send to ${topic}: ${reply.result ?? 'no result'}${reply.errorMsg ? ` (${reply.errorMsg})` : ''}`,
    !aboutMessage,
  );
}

// ---------------------------------------------------------------------------------------------
// Consumer

/** The socket each delivered message came on: its ack is only meaningful on that socket. */
const deliveredOn = new WeakMap<PulsarInboundMessage, WebSocket>();

class WebSocketConsumer implements PulsarConsumer {
  readonly #subscriptions = new Map<string, TopicSubscription>();

  constructor(
    private readonly options: PulsarConsumerOptions,
    private readonly openSocket: (topic: string) => Promise<WebSocket>,
  ) {
    if (options.topics.length === 0) throw new RangeError('a Pulsar consumer needs a topic');
    for (const topic of options.topics) parseTopicName(topic);
  }

  async start(handlers: PulsarConsumerHandlers): Promise<void> {
    const permits = Math.max(1, this.options.maxUnsettled ?? 100);
    for (const topic of this.options.topics) {
      this.#subscriptions.set(
        topic,
        new TopicSubscription(topic, permits, () => this.openSocket(topic), handlers),
      );
    }
    try {
      await Promise.all([...this.#subscriptions.values()].map((s) => s.start()));
    } catch (error) {
      await this.close();
      throw error;
    }
  }

  ack(message: PulsarInboundMessage): void {
    this.#subscriptions.get(message.topic)?.settle(message, { messageId: message.messageId });
  }

  nack(message: PulsarInboundMessage): void {
    this.#subscriptions
      .get(message.topic)
      ?.settle(message, { type: 'negativeAcknowledge', messageId: message.messageId });
  }

  pause(): void {
    for (const subscription of this.#subscriptions.values()) subscription.pause();
  }

  resume(): void {
    for (const subscription of this.#subscriptions.values()) subscription.resume();
  }

  async close(): Promise<void> {
    await Promise.all([...this.#subscriptions.values()].map((s) => s.close()));
  }
}

const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5_000;

class TopicSubscription {
  #socket: WebSocket | undefined;
  #closed = false;
  #reconnectMs = RECONNECT_MIN_MS;
  #reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  /** Paused: permits owed to the broker for messages settled meanwhile, sent on resume. */
  #withheld: number | undefined;

  constructor(
    private readonly topic: string,
    private readonly permits: number,
    private readonly openSocket: () => Promise<WebSocket>,
    private readonly handlers: PulsarConsumerHandlers,
  ) {}

  async start(): Promise<void> {
    this.#attach(await this.openSocket());
  }

  settle(message: PulsarInboundMessage, command: Record<string, string>): void {
    const socket = deliveredOn.get(message);
    // Delivered on a socket that is gone: the broker redelivers it on the new one.
    if (socket === undefined || socket !== this.#socket || socket.readyState !== SOCKET_OPEN) {
      return;
    }
    socket.send(JSON.stringify(command));
    if (this.#withheld !== undefined) this.#withheld++;
    else socket.send(JSON.stringify({ type: 'permit', permitMessages: 1 }));
  }

  pause(): void {
    this.#withheld ??= 0;
  }

  resume(): void {
    const owed = this.#withheld;
    this.#withheld = undefined;
    const socket = this.#socket;
    if (owed !== undefined && owed > 0 && socket?.readyState === SOCKET_OPEN)
      socket.send(JSON.stringify({ type: 'permit', permitMessages: owed }));
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#reconnectTimer);
    if (this.#socket) await closeSocket(this.#socket);
  }

  #attach(socket: WebSocket): void {
    if (this.#closed) {
      socket.close();
      return;
    }
    this.#socket = socket;
    this.#reconnectMs = RECONNECT_MIN_MS;
    // A new socket starts with a full set of permits (the old one's unsettled come back on it).
    if (this.#withheld !== undefined) this.#withheld = 0;
    socket.on('message', (data) => this.#onFrame(socket, frameText(data)));
    socket.on('error', (error) => this.handlers.onError?.(error));
    socket.on('close', () => {
      if (this.#socket === socket) this.#socket = undefined;
      if (!this.#closed) this.#reconnectLater();
    });
    socket.send(JSON.stringify({ type: 'permit', permitMessages: this.permits }));
  }

  #reconnectLater(): void {
    const wait = this.#reconnectMs;
    this.#reconnectMs = Math.min(this.#reconnectMs * 2, RECONNECT_MAX_MS);
    this.#reconnectTimer = setTimeout(() => {
      this.openSocket().then(
        (socket) => this.#attach(socket),
        (error: unknown) => {
          this.handlers.onError?.(error);
          if (!this.#closed) this.#reconnectLater();
        },
      );
    }, wait);
  }

  #onFrame(socket: WebSocket, text: string): void {
    let frame: {
      messageId?: string;
      payload?: string;
      properties?: Record<string, string>;
      publishTime?: string;
      redeliveryCount?: number;
      key?: string;
    };
    try {
      frame = JSON.parse(text) as typeof frame;
    } catch {
      return;
    }
    if (typeof frame.messageId !== 'string' || typeof frame.payload !== 'string') return;
    const message: PulsarInboundMessage = {
      topic: this.topic,
      messageId: frame.messageId,
      key: typeof frame.key === 'string' ? frame.key : null,
      payload: Buffer.from(frame.payload, 'base64'),
      properties: frame.properties ?? {},
      publishTime: frame.publishTime === undefined ? 0 : Date.parse(frame.publishTime),
      redeliveryCount: frame.redeliveryCount ?? 0,
    };
    deliveredOn.set(message, socket);
    this.handlers.onMessage(message);
  }
}

// ---------------------------------------------------------------------------------------------
// Sockets

let wsModule: Promise<typeof WebSocket> | undefined;

/** Loads `ws` once, with an install hint when the service lacks it. */
function loadWebSocket(): Promise<typeof WebSocket> {
  wsModule ??= import('ws').then(
    (module) => module.default,
    (error: unknown) => {
      wsModule = undefined;
      if ((error as { code?: string }).code === 'ERR_MODULE_NOT_FOUND') {
        throw new PulsarClientError(
          "the Pulsar WebSocket client needs the 'ws' package: npm install --save-exact ws@8.23.1",
          false,
        );
      }
      throw error;
    },
  );
  return wsModule;
}

async function openSocket(url: string, connection: PulsarWebSocketConnection): Promise<WebSocket> {
  const timeoutMs = connection.connectTimeoutMs ?? 10_000;
  const WebSocketClass = await loadWebSocket();
  return new Promise((resolve, reject) => {
    const socket = new WebSocketClass(url, {
      headers: { ...connection.headers },
      handshakeTimeout: timeoutMs,
    });
    const where = url.replace(/\?.*$/, '');
    socket.once('open', () => {
      socket.removeAllListeners('error');
      socket.removeAllListeners('unexpected-response');
      resolve(socket);
    });
    socket.once('error', (error) => reject(unavailable(`connecting to ${where}`, error)));
    socket.once('unexpected-response', (_request, response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      response.on('end', () => {
        const status = response.statusCode ?? 0;
        reject(
          new PulsarClientError(
            `the broker refused ${where}: HTTP ${status}${body ? ` ${body.slice(0, 300)}` : ''}`,
            status >= 500,
          ),
        );
        socket.terminate();
      });
    });
  });
}

/** A text frame's content (`ws` hands frames over as a Buffer, an ArrayBuffer or fragments). */
function frameText(data: WebSocket.RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data as ArrayBuffer).toString('utf8');
}

function closeSocket(socket: WebSocket): Promise<void> {
  if (socket.readyState === SOCKET_CLOSED) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      socket.terminate();
      resolve();
    }, 5_000);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
    socket.close();
  });
}

function unavailable(what: string, error: Error): PulsarClientError {
  return new PulsarClientError(`${what} failed: ${error.message}`, true);
}

/** `persistent/tenant/namespace/topic`, each part URL-encoded. */
function topicPath(topic: string): string {
  const { domain, tenant, namespace, local } = parseTopicName(topic);
  return [domain, tenant, namespace, local].map(encodeURIComponent).join('/');
}

function queryString(query: Record<string, string | number | undefined>): string {
  const entries = Object.entries(query).filter(([, value]) => value !== undefined);
  if (entries.length === 0) return '';
  return `?${entries.map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`).join('&')}`;
}
