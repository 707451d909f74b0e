/**
 * A TCP proxy that injects network faults between the runtime and a server (PostgreSQL,
 * RabbitMQ, Kafka): put it in front of the server, point the client at `proxy.port`, and switch
 * faults on and off while the client runs.
 *
 *   refuse()      the listening socket closes: new connections get ECONNREFUSED, open ones live on
 *   dropAll()     every open connection is reset (RST to the client, close to the server)
 *   blackhole()   bytes stop flowing both ways, nobody is told: open and new connections hang
 *                 (TCP back-pressure holds what was sent; restore() lets it through, as a healed
 *                 network would after retransmits)
 *   latency(ms)   every chunk is delayed by `ms` in each direction (order kept)
 *   restore()     no fault: listening again, bytes flow, no added latency
 *
 * Faults combine: `refuse(); dropAll()` is a server that went away. `close()` ends everything.
 */
import net from 'node:net';

export interface FaultProxyOptions {
  /** The real server. */
  readonly targetHost?: string;
  readonly targetPort: number;
  /** Port to listen on; 0 (default) picks a free one, kept across refuse()/restore(). */
  readonly port?: number;
}

export interface FaultProxyStats {
  /** Connections accepted since the proxy started. */
  readonly accepted: number;
  /** Connections currently open. */
  readonly open: number;
  /** Connections reset by dropAll(). */
  readonly dropped: number;
}

export interface FaultProxy {
  readonly host: string;
  readonly port: number;
  /** Stops listening: new connections are refused by the kernel. Open connections are untouched. */
  refuse(): Promise<void>;
  /** Resets every open connection. Does not stop new ones (combine with refuse() for that). */
  dropAll(): void;
  /** Silently stops forwarding on open and new connections (no reset, no close). */
  blackhole(): void;
  /** Adds `ms` of one-way delay to every chunk in both directions (0 removes it). */
  latency(ms: number): void;
  /** Ends every fault: listening, forwarding, no latency. Held bytes are delivered. */
  restore(): Promise<void>;
  stats(): FaultProxyStats;
  close(): Promise<void>;
}

/** One direction of one connection: forwards chunks, optionally delayed, in order. */
class Pipe {
  private readonly queue: { due: number; chunk: Buffer }[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly from: net.Socket,
    private readonly to: net.Socket,
    private readonly latencyMs: () => number,
  ) {
    from.on('data', (chunk: Buffer) => this.push(chunk));
    from.on('end', () => this.whenFlushed(() => to.end()));
  }

  private push(chunk: Buffer): void {
    const delay = this.latencyMs();
    if (delay <= 0 && this.queue.length === 0) {
      this.write(chunk);
      return;
    }
    this.queue.push({ due: Date.now() + delay, chunk });
    this.schedule();
  }

  private write(chunk: Buffer): void {
    if (this.to.destroyed) return;
    // Back-pressure: a slow reader slows the writer down instead of growing memory.
    if (!this.to.write(chunk)) {
      this.from.pause();
      this.to.once('drain', () => {
        if (!this.paused) this.from.resume();
      });
    }
  }

  /** Set by blackhole(): the source is paused and stays paused through drains. */
  paused = false;

  private schedule(): void {
    if (this.timer !== undefined || this.queue.length === 0) return;
    const wait = Math.max(0, this.queue[0]!.due - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const now = Date.now();
      while (this.queue.length > 0 && this.queue[0]!.due <= now)
        this.write(this.queue.shift()!.chunk);
      this.schedule();
      if (this.queue.length === 0) this.flushed?.();
    }, wait);
  }

  private flushed: (() => void) | undefined;
  private whenFlushed(callback: () => void): void {
    if (this.queue.length === 0) callback();
    else this.flushed = callback;
  }

  hold(): void {
    this.paused = true;
    this.from.pause();
  }

  release(): void {
    this.paused = false;
    this.from.resume();
  }

  dispose(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.queue.length = 0;
  }
}

interface Connection {
  readonly client: net.Socket;
  readonly server: net.Socket;
  readonly pipes: readonly Pipe[];
}

/**
 * Listens on a free port below the kernel's ephemeral range (32768–60999 here). refuse() closes
 * the listener and restore() must get the same port back; an ephemeral port could meanwhile be
 * taken as the local port of some outgoing connection (EADDRINUSE seen in CI), a port below the
 * range only by another listener.
 */
async function listenOutsideEphemeralRange(
  listen: (port: number) => Promise<number>,
): Promise<number> {
  for (let tries = 0; ; tries++) {
    const candidate = 20_000 + Math.floor(Math.random() * 12_000);
    try {
      return await listen(candidate);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || tries >= 100) throw error;
    }
  }
}

export async function startFaultProxy(options: FaultProxyOptions): Promise<FaultProxy> {
  const targetHost = options.targetHost ?? '127.0.0.1';
  const host = '127.0.0.1';
  const connections = new Set<Connection>();
  let holding = false;
  let latencyMs = 0;
  let accepted = 0;
  let dropped = 0;
  let closed = false;

  const onConnection = (client: net.Socket) => {
    accepted++;
    const server = net.connect({ host: targetHost, port: options.targetPort });
    const pipes = [
      new Pipe(client, server, () => latencyMs),
      new Pipe(server, client, () => latencyMs),
    ];
    const connection: Connection = { client, server, pipes };
    connections.add(connection);
    if (holding) for (const pipe of pipes) pipe.hold();
    const end = () => {
      if (!connections.delete(connection)) return;
      for (const pipe of pipes) pipe.dispose();
      client.destroy();
      server.destroy();
    };
    client.on('error', end);
    server.on('error', end);
    client.on('close', end);
    server.on('close', end);
  };

  let listener = net.createServer(onConnection);
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen(port, host, () => {
        listener.off('error', reject);
        resolve((listener.address() as net.AddressInfo).port);
      });
    });
  const port = options.port ?? (await listenOutsideEphemeralRange(listen));
  if (options.port !== undefined) await listen(options.port);
  let listening = true;

  const stopListening = () =>
    new Promise<void>((resolve) => {
      if (!listening) {
        resolve();
        return;
      }
      listening = false;
      // close() stops accepting at once; its callback waits for open connections, so do not wait.
      listener.close();
      resolve();
    });

  return {
    host,
    port,
    refuse: stopListening,
    dropAll() {
      for (const connection of [...connections]) {
        dropped++;
        connections.delete(connection);
        for (const pipe of connection.pipes) pipe.dispose();
        connection.client.resetAndDestroy();
        connection.server.destroy();
      }
    },
    blackhole() {
      holding = true;
      for (const connection of connections) for (const pipe of connection.pipes) pipe.hold();
    },
    latency(ms: number) {
      if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`latency must be ≥ 0 ms, got ${ms}`);
      latencyMs = ms;
    },
    async restore() {
      if (closed) return;
      holding = false;
      latencyMs = 0;
      for (const connection of connections) for (const pipe of connection.pipes) pipe.release();
      if (!listening) {
        listener = net.createServer(onConnection);
        await listen(port);
        listening = true;
      }
    },
    stats: () => ({ accepted, open: connections.size, dropped }),
    async close() {
      closed = true;
      await stopListening();
      for (const connection of [...connections]) {
        connections.delete(connection);
        for (const pipe of connection.pipes) pipe.dispose();
        connection.client.destroy();
        connection.server.destroy();
      }
    },
  };
}
