/**
 * The test broker itself (test/support/pulsar/broker.ts): the shared broker the global setup
 * started answers on loopback only; an extra broker keeps its topics across a SIGKILL and a
 * restart, is silent while paused, and leaves nothing behind; the leases stop the shared broker
 * only when no live run holds one.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  pulsarAnswers,
  releasePulsarLease,
  SHARED_PULSAR_BOOKIE_PORT,
  SHARED_PULSAR_PORT,
  SHARED_PULSAR_WEB_PORT,
  startExtraPulsarBroker,
  takePulsarLease,
  TEST_PULSAR_WEB_URL,
} from '../support/pulsar/broker.js';

/** Local addresses of the listening TCP sockets on `port` (from `ss`). */
function listeners(port: number): string[] {
  const ss = spawnSync('ss', ['-ltnH', `sport = :${port}`], { encoding: 'utf8' });
  if (ss.status !== 0) throw new Error(`ss failed: ${ss.stderr}`);
  return ss.stdout
    .trim()
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => line.trim().split(/\s+/)[3]!);
}

async function admin(webUrl: string, method: string, path: string): Promise<Response> {
  return fetch(`${webUrl}/admin/v2/${path}`, { method, signal: AbortSignal.timeout(10_000) });
}

describe('the shared test broker', () => {
  it('answers the admin API and listens on loopback only (binary, HTTP and bookie ports)', async () => {
    expect(await pulsarAnswers(TEST_PULSAR_WEB_URL)).toBe(true);
    for (const port of [SHARED_PULSAR_PORT, SHARED_PULSAR_WEB_PORT, SHARED_PULSAR_BOOKIE_PORT]) {
      const addresses = listeners(port);
      expect(addresses.length, `listeners on ${port}`).toBeGreaterThan(0);
      for (const address of addresses) expect(address).toBe(`127.0.0.1:${port}`);
    }
  });

  it('creates and deletes a topic of its own through the admin API', async () => {
    const topic = `persistent/public/default/evgen-t-${randomBytes(4).toString('hex')}`;
    expect((await admin(TEST_PULSAR_WEB_URL, 'PUT', topic)).status).toBe(204);
    const listed = (await (
      await admin(TEST_PULSAR_WEB_URL, 'GET', 'persistent/public/default')
    ).json()) as string[];
    expect(listed).toContain(`persistent://${topic.slice('persistent/'.length)}`);
    expect((await admin(TEST_PULSAR_WEB_URL, 'DELETE', topic)).status).toBe(204);
  });
});

describe('an extra broker for fault tests', () => {
  it('keeps its topics across SIGKILL and restart, answers nothing while paused, and is removed by destroy', async () => {
    const broker = await startExtraPulsarBroker();
    try {
      const topic = 'persistent/public/default/survives-restart';
      expect((await admin(broker.webUrl, 'PUT', topic)).status).toBe(204);

      broker.pause();
      expect(await pulsarAnswers(broker.webUrl, 1_500)).toBe(false);
      broker.resume();
      expect(await pulsarAnswers(broker.webUrl, 10_000)).toBe(true);

      const before = broker.pid();
      await broker.kill();
      expect(await pulsarAnswers(broker.webUrl, 1_500)).toBe(false);
      await broker.restart();
      expect(broker.pid()).not.toBe(before);
      const listed = (await (
        await admin(broker.webUrl, 'GET', 'persistent/public/default')
      ).json()) as string[];
      expect(listed).toContain('persistent://public/default/survives-restart');
    } finally {
      await broker.destroy();
    }
    expect(existsSync(broker.dataDir)).toBe(false);
    expect(listeners(broker.webPort)).toEqual([]);
  }, 240_000);
});

describe('leases on the shared broker', () => {
  it('a release stops nothing while another live process holds a lease, and drops leases of dead processes', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'evgen-pulsar-lease-'));
    try {
      const dead = spawnSync('true').pid; // exited: its lease must not keep a broker alive
      takePulsarLease(dataDir, process.pid);
      takePulsarLease(dataDir, process.ppid);
      takePulsarLease(dataDir, dead);
      // Our parent (the vitest main process) is alive: the broker would stay.
      expect(await releasePulsarLease(dataDir, process.pid)).toBe(false);
      expect(readdirSync(join(dataDir, 'leases')).sort()).toEqual(
        [String(process.ppid), String(dead)].sort(),
      );
      // The last live holder leaves: the leases go (no broker of ours ran in this dir).
      expect(await releasePulsarLease(dataDir, process.ppid)).toBe(false);
      expect(existsSync(join(dataDir, 'leases'))).toBe(false);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
