/**
 * A real schema registry for the tests: Apicurio Registry 3.0.9, which speaks Confluent's REST API
 * under `/apis/ccompat/v7`, started from its Maven Central distribution (no Docker).
 *
 * - The distribution (`io.apicurio:apicurio-registry-app:3.0.9`, classifier `all`, type `zip`,
 *   ~109 MB) is fetched once with mvn and unzipped into a cache folder outside the repository
 *   (`$EVGEN_APICURIO_CACHE`, default `~/.cache/evgen/apicurio-3.0.9`).
 * - The shared registry listens on 127.0.0.1:18080 only, stores in in-memory H2 (state is lost on
 *   restart), is reused when it answers and started otherwise; its PID file (in
 *   `<tmp>/evgen-apicurio-shared`) lets `stop.ts` kill exactly it.
 * - Readiness is `/health/ready` answering 200 and the ccompat API answering, never a sleep.
 *
 * Tests use subjects of their own (`uniqueSubjectPrefix`) and delete them afterwards.
 */
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { withLock, withLockAsync } from '../file-lock.js';
import { tail } from '../kafka/broker.js';

export const APICURIO_VERSION = '3.0.9';
export const SHARED_REGISTRY_PORT = 18080;

/** The ccompat (Confluent API) base URL every registry test uses. */
export const TEST_REGISTRY_URL =
  process.env.EVGEN_TEST_REGISTRY_URL ?? `http://127.0.0.1:${SHARED_REGISTRY_PORT}/apis/ccompat/v7`;

const RUNNER_JAR = `apicurio-registry-app-${APICURIO_VERSION}-runner.jar`;

/** Small heap and a fast-starting JIT: ready in ~8 s, ~200 MB resident. */
const JVM_FLAGS = [
  '-Xms128m',
  '-Xmx256m',
  '-XX:+UseSerialGC',
  '-XX:TieredStopAtLevel=1',
  '-XX:+ExitOnOutOfMemoryError',
];

function cacheDir(): string {
  return (
    process.env.EVGEN_APICURIO_CACHE ??
    join(homedir(), '.cache', 'evgen', `apicurio-${APICURIO_VERSION}`)
  );
}

function sharedDataDir(): string {
  return process.env.EVGEN_APICURIO_DATA_DIR ?? join(tmpdir(), 'evgen-apicurio-shared');
}

const pidFile = (dataDir: string) => join(dataDir, 'apicurio.pid');
const logFile = (dataDir: string) => join(dataDir, 'apicurio.out');

/** Fetches and unzips the distribution once; returns the folder holding the runner jar. */
export function ensureApicurioApp(): string {
  const app = join(cacheDir(), 'app');
  if (existsSync(join(app, RUNNER_JAR))) return app;
  mkdirSync(cacheDir(), { recursive: true });
  return withLock(join(cacheDir(), 'download.lock'), () => {
    if (existsSync(join(app, RUNNER_JAR))) return app;
    const download = join(cacheDir(), 'download');
    const fetch = spawnSync(
      'mvn',
      [
        '-q',
        '-B',
        'dependency:copy',
        `-Dartifact=io.apicurio:apicurio-registry-app:${APICURIO_VERSION}:zip:all`,
        `-DoutputDirectory=${download}`,
      ],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const zip = join(download, `apicurio-registry-app-${APICURIO_VERSION}-all.zip`);
    if (fetch.error || fetch.status !== 0 || !existsSync(zip)) {
      throw new Error(
        `could not fetch Apicurio Registry ${APICURIO_VERSION} with Maven into ${download} ` +
          `(is mvn installed and Maven Central reachable?): ${fetch.error?.message ?? ''}\n${fetch.stdout}${fetch.stderr}`,
      );
    }
    const staging = `${app}.${process.pid}`;
    const unzip = spawnSync('unzip', ['-q', '-o', zip, '-d', staging], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // The zip holds the runner jar and lib/ either at its root or under one folder.
    const root = existsSync(join(staging, RUNNER_JAR))
      ? staging
      : join(staging, findRunnerFolder(staging));
    if (unzip.error || unzip.status !== 0 || !existsSync(join(root, RUNNER_JAR))) {
      throw new Error(`could not unzip ${zip}: ${unzip.error?.message ?? ''}${unzip.stderr}`);
    }
    spawnSync('mv', [root, app]);
    spawnSync('rm', ['-rf', staging]);
    return app;
  });
}

function findRunnerFolder(staging: string): string {
  const found = spawnSync('find', [staging, '-name', RUNNER_JAR], { encoding: 'utf8' });
  const jar = found.stdout.trim().split('\n')[0] ?? '';
  return jar.slice(staging.length + 1, jar.length - RUNNER_JAR.length - 1);
}

/** true when the registry at `port` is ready and its Confluent API answers. */
export async function registryAnswers(port: number, timeoutMs = 2_000): Promise<boolean> {
  try {
    const ready = await fetch(`http://127.0.0.1:${port}/health/ready`, {
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (ready.status !== 200) return false;
    const types = await fetch(`http://127.0.0.1:${port}/apis/ccompat/v7/schemas/types`, {
      signal: AbortSignal.timeout(timeoutMs),
    });
    return types.status === 200;
  } catch {
    return false;
  }
}

/** true while `pid` is a live process running the Apicurio runner jar. */
export function isApicurioProcess(pid: number): boolean {
  try {
    if (/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'))) return false;
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(RUNNER_JAR);
  } catch {
    return false;
  }
}

function readPid(dataDir: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(pidFile(dataDir), 'utf8').trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

export interface RunningRegistry {
  readonly url: string;
  readonly port: number;
  readonly pid: number | undefined;
  readonly started: boolean;
  readonly dataDir: string;
}

/** Starts a registry on `port` unless one answers there; resolves when it is ready. */
export async function startRegistry(
  port: number,
  dataDir: string,
  readyTimeoutMs = 120_000,
): Promise<RunningRegistry> {
  const url = `http://127.0.0.1:${port}/apis/ccompat/v7`;
  mkdirSync(dataDir, { recursive: true });
  const outcome = await withLockAsync(join(dataDir, 'start.lock'), async () => {
    if (await registryAnswers(port)) return { pid: readPid(dataDir), started: false };
    const stale = readPid(dataDir);
    if (stale !== undefined && isApicurioProcess(stale)) {
      await waitForRegistry(port, readyTimeoutMs, stale, dataDir);
      return { pid: stale, started: false };
    }
    const app = ensureApicurioApp();
    const out = openSync(logFile(dataDir), 'a');
    const child = spawn(
      'java',
      [
        ...JVM_FLAGS,
        '-Dquarkus.http.host=127.0.0.1',
        `-Dquarkus.http.port=${port}`,
        '-jar',
        RUNNER_JAR,
      ],
      { cwd: app, detached: true, stdio: ['ignore', out, out] },
    );
    closeSync(out);
    child.unref();
    if (child.pid === undefined) throw new Error('could not spawn java for Apicurio Registry');
    writeFileSync(pidFile(dataDir), `${child.pid}\n`);
    await waitForRegistry(port, readyTimeoutMs, child.pid, dataDir);
    return { pid: child.pid, started: true };
  });
  return { url, port, dataDir, ...outcome };
}

/** Reuses the shared registry when it answers, starts it otherwise. */
export function ensureSharedRegistry(): Promise<RunningRegistry> {
  return startRegistry(SHARED_REGISTRY_PORT, sharedDataDir());
}

/** Stops the shared registry of our PID file (SIGTERM, then SIGKILL); false when none ran. */
export async function stopSharedRegistry(graceMs = 20_000): Promise<boolean> {
  const dataDir = sharedDataDir();
  const pid = readPid(dataDir);
  if (pid === undefined || !isApicurioProcess(pid)) return false;
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (isApicurioProcess(pid) && Date.now() < deadline) await delay(100);
  if (isApicurioProcess(pid)) process.kill(pid, 'SIGKILL');
  return true;
}

async function waitForRegistry(
  port: number,
  timeoutMs: number,
  pid: number,
  dataDir: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await registryAnswers(port)) return;
    if (!isApicurioProcess(pid)) {
      throw new Error(
        `Apicurio Registry (pid ${pid}) on port ${port} exited during start-up; last output:\n${tail(logFile(dataDir))}`,
      );
    }
    await delay(250);
  }
  throw new Error(
    `Apicurio Registry (pid ${pid}) on port ${port} was not ready within ${timeoutMs} ms; last output:\n${tail(logFile(dataDir))}`,
  );
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
