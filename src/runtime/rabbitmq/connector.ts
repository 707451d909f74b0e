/**
 * One AMQP connection that is re-opened on demand after it was lost. Channels do not survive a
 * connection, so users (publisher, consumer runner) ask for `connection()` again after a close
 * and rebuild their channels on what they get.
 */
import type { ChannelModel } from 'amqplib';
import { backoffDelay, type BackoffOptions, type BackoffSettings } from '../backoff.js';
import type { RunnerTimers } from '../delivery/runner-timers.js';
import { sleep } from '../sleep.js';

/** Reconnect delays where the options leave a setting out (100 ms doubling to 5 s, 0.2 jitter). */
export const DEFAULT_RECONNECT_BACKOFF: BackoffSettings = {
  baseMs: 100,
  capMs: 5_000,
  jitter: 0.2,
};

export interface AmqpConnectorOptions {
  /** e.g. `amqp://guest:guest@127.0.0.1:5672`. */
  readonly url: string;
  /** Shown in the management UI and `rabbitmqctl list_connections client_properties`. */
  readonly connectionName?: string;
  /** Backoff between failed connection attempts. */
  readonly backoff?: BackoffOptions;
  /** Connection attempts per `connection()` call before it rejects. Default: unlimited. */
  readonly maxAttempts?: number;
  /** Heartbeat in seconds (amqplib's option). Default 10, so a dead peer is noticed. */
  readonly heartbeat?: number;
  /** Called with errors of failed attempts and of lost connections (for logging). */
  readonly onError?: (error: Error) => void;
  /** Source of the backoff's jitter, in [0, 1) (a runner passes its `random`). Default `Math.random`. */
  readonly random?: (() => number) | undefined;
  /** Timers the backoff waits with (a runner passes its `timers`). Default: the process's. */
  readonly timers?: RunnerTimers | undefined;
}

export interface AmqpConnector {
  /** The open connection, connecting (with backoff) if there is none. Rejects after `close()`. */
  connection(): Promise<ChannelModel>;
  /** Whether `close()` was called. */
  readonly closed: boolean;
  /** Closes the connection and stops reconnecting. */
  close(): Promise<void>;
}

/** A fixed connection or a reconnecting connector: what publishers, replays and stats accept. */
export type ConnectionSource = ChannelModel | AmqpConnector;

export function isConnector(source: ConnectionSource): source is AmqpConnector {
  return typeof (source as AmqpConnector).connection === 'function';
}

/** The connection to open channels on now: the fixed one, or the connector's current one. */
export function currentConnection(source: ConnectionSource): Promise<ChannelModel> {
  return isConnector(source) ? source.connection() : Promise.resolve(source);
}

/** Adds `heartbeat=<s>` to the URL unless it sets one (amqplib reads it from the URL). */
function withHeartbeat(url: string, seconds: number): string {
  if (/[?&]heartbeat=/.test(url)) return url;
  return `${url}${url.includes('?') ? '&' : '?'}heartbeat=${seconds}`;
}

export function createAmqpConnector(options: AmqpConnectorOptions): AmqpConnector {
  let current: ChannelModel | undefined;
  let pending: Promise<ChannelModel> | undefined;
  let closed = false;
  const abort = new AbortController();

  async function open(): Promise<ChannelModel> {
    // amqplib is loaded only by applications that use the RabbitMQ transport.
    const { connect } = await import('amqplib');
    for (let attempt = 1; ; attempt++) {
      if (closed) throw new Error('AMQP connector is closed');
      try {
        const model = await connect(withHeartbeat(options.url, options.heartbeat ?? 10), {
          clientProperties: options.connectionName
            ? { connection_name: options.connectionName }
            : {},
        });
        if (closed) {
          await model.close().catch(() => undefined);
          throw new Error('AMQP connector is closed');
        }
        model.on('error', (error: Error) => options.onError?.(error));
        model.on('close', () => {
          if (current === model) current = undefined;
        });
        current = model;
        return model;
      } catch (error) {
        if (closed) throw error;
        options.onError?.(error instanceof Error ? error : new Error(String(error)));
        if (options.maxAttempts !== undefined && attempt >= options.maxAttempts) throw error;
        await sleep(
          backoffDelay(attempt, options.backoff, DEFAULT_RECONNECT_BACKOFF, options.random),
          abort.signal,
          options.timers,
        );
      }
    }
  }

  return {
    get closed() {
      return closed;
    },
    connection() {
      if (closed) return Promise.reject(new Error('AMQP connector is closed'));
      if (current !== undefined) return Promise.resolve(current);
      pending ??= open().finally(() => {
        pending = undefined;
      });
      return pending;
    },
    async close() {
      closed = true;
      abort.abort();
      const model = current;
      current = undefined;
      await pending?.catch(() => undefined);
      if (model !== undefined) await model.close().catch(() => undefined);
    },
  };
}

/**
 * A connector over a connection the caller opened and owns. It never reconnects: after that
 * connection closed, `connection()` rejects. `close()` does not close the caller's connection.
 */
export function fixedConnector(model: ChannelModel): AmqpConnector {
  let open = true;
  let closed = false;
  const onClose = () => {
    open = false;
  };
  model.once('close', onClose);
  return {
    get closed() {
      return closed;
    },
    connection() {
      if (closed) return Promise.reject(new Error('AMQP connector is closed'));
      if (!open)
        return Promise.reject(
          new Error(
            'the AMQP connection was closed (pass a URL or createAmqpConnector() to reconnect)',
          ),
        );
      return Promise.resolve(model);
    },
    async close() {
      closed = true;
      // Many short-lived users of one long-lived connection must not pile up listeners on it.
      model.removeListener('close', onClose);
    },
  };
}
