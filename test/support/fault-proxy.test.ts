/**
 * The fault proxy itself: forwards bytes, and each fault does what the outage tests rely on.
 * Against a local echo server and against the real PostgreSQL.
 */
import net from 'node:net';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { startFaultProxy, type FaultProxy } from './fault-proxy.js';

interface Echo {
  readonly port: number;
  close(): Promise<void>;
}

async function startEcho(): Promise<Echo> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A connected client that collects what comes back and how the connection ended. */
async function connect(port: number) {
  const socket = net.connect({ host: '127.0.0.1', port });
  let received = '';
  let error: NodeJS.ErrnoException | undefined;
  let closed = false;
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
  socket.on('error', (e) => (error = e));
  socket.on('close', () => (closed = true));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return {
    socket,
    received: () => received,
    error: () => error,
    closed: () => closed,
  };
}

async function until(what: string, check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('fault proxy', () => {
  let echo: Echo | undefined;
  let proxy: FaultProxy | undefined;
  afterEach(async () => {
    await proxy?.close();
    await echo?.close();
    proxy = undefined;
    echo = undefined;
  });

  async function setUp() {
    echo = await startEcho();
    proxy = await startFaultProxy({ targetPort: echo.port });
    return proxy;
  }

  it('forwards bytes both ways', async () => {
    const p = await setUp();
    const client = await connect(p.port);
    client.socket.write('hello');
    await until('echo', () => client.received() === 'hello');
    expect(p.stats()).toMatchObject({ accepted: 1, open: 1 });
    client.socket.destroy();
  });

  it('refuse() makes new connections fail with ECONNREFUSED, keeps open ones, restore() listens again on the same port', async () => {
    const p = await setUp();
    const open = await connect(p.port);
    await p.refuse();
    await expect(connect(p.port)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    open.socket.write('still');
    await until('echo on the open connection', () => open.received() === 'still');
    await p.restore();
    const again = await connect(p.port);
    again.socket.write('back');
    await until('echo after restore', () => again.received() === 'back');
    open.socket.destroy();
    again.socket.destroy();
  });

  it('dropAll() resets every open connection', async () => {
    const p = await setUp();
    const a = await connect(p.port);
    const b = await connect(p.port);
    await until('both accepted', () => p.stats().open === 2);
    p.dropAll();
    await until('both closed', () => a.closed() && b.closed());
    expect(a.error()?.code).toBe('ECONNRESET');
    expect(p.stats()).toMatchObject({ open: 0, dropped: 2 });
  });

  it('blackhole() holds bytes without closing anything; restore() delivers them', async () => {
    const p = await setUp();
    const client = await connect(p.port);
    p.blackhole();
    client.socket.write('held');
    const late = await connect(p.port); // a new connection is accepted but hangs too
    late.socket.write('late');
    await pause(300);
    expect(client.received()).toBe('');
    expect(late.received()).toBe('');
    expect(client.closed() || late.closed()).toBe(false);
    await p.restore();
    await until('held bytes delivered', () => client.received() === 'held');
    await until('late bytes delivered', () => late.received() === 'late');
    client.socket.destroy();
    late.socket.destroy();
  });

  it('latency(ms) delays each direction and keeps the byte order', async () => {
    const p = await setUp();
    const client = await connect(p.port);
    p.latency(150);
    const sentAt = Date.now();
    for (const part of ['a', 'b', 'c', 'd']) client.socket.write(part);
    await until('echo', () => client.received() === 'abcd');
    // Two one-way delays at least (client → server and back).
    expect(Date.now() - sentAt).toBeGreaterThanOrEqual(290);
    await p.restore();
    const quick = Date.now();
    client.socket.write('e');
    await until('echo without latency', () => client.received() === 'abcde');
    expect(Date.now() - quick).toBeLessThan(150);
    client.socket.destroy();
  });

  it('cuts a real PostgreSQL session: the client sees the drop, a new one connects after restore', async () => {
    proxy = await startFaultProxy({ targetPort: 5432 });
    const url = `postgres://postgres@127.0.0.1:${proxy.port}/test`;
    const client = new pg.Client({ connectionString: url });
    const errors: Error[] = [];
    client.on('error', (error) => errors.push(error));
    await client.connect();
    expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    await proxy.refuse();
    proxy.dropAll();
    await expect(client.query('SELECT 1')).rejects.toThrow();
    await expect(new pg.Client({ connectionString: url }).connect()).rejects.toMatchObject({
      code: 'ECONNREFUSED',
    });
    await proxy.restore();
    const fresh = new pg.Client({ connectionString: url });
    await fresh.connect();
    expect((await fresh.query('SELECT 2 AS two')).rows).toEqual([{ two: 2 }]);
    await fresh.end();
  });
});
