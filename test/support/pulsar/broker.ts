/**
 * A real Apache Pulsar 4.2.4 standalone broker for the tests, started from Maven Central jars
 * (no Docker, no distribution tarball).
 *
 * - The jars are fetched once with the throwaway `pom.xml` beside this file into a cache folder
 *   outside the repository (`$EVGEN_PULSAR_CACHE`, default `~/.cache/evgen/pulsar-4.2.4/libs`).
 * - Standalone mode runs the broker, one embedded BookKeeper bookie and a RocksDB metadata store
 *   in one JVM (`PulsarStandaloneStarter -nfw -nss`: no functions worker, no stream storage),
 *   every port on 127.0.0.1, with the WebSocket API enabled.
 * - The shared broker (binary 26650, HTTP/WebSocket 28080, bookie 23181, data in
 *   `<tmp>/evgen-pulsar-shared`) is reused when it answers. Unlike Kafka it is not left running:
 *   every vitest run that uses it holds a lease (`leases/<pid>`), and the last run to finish stops
 *   it and deletes its data (see `global-setup.ts`).
 * - Tests that kill, pause or restart a broker start an extra instance with its own ports and data
 *   dir (`startExtraPulsarBroker`) and never touch the shared one.
 *
 * Readiness is the admin API listing the `public/default` namespace (the standalone starter creates
 * it last), never a sleep. A PID is only signalled after checking it still runs the starter.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readPidFile, runsJavaClass, waitForExit, waitUntilAnswering } from '../broker-process.js';
import { withLockAsync } from '../file-lock.js';
import { freePorts, tail } from '../kafka/broker.js';
import { fetchMavenJars } from '../maven-jars.js';

export const PULSAR_VERSION = '4.2.4';

export const SHARED_PULSAR_PORT = 26650;
export const SHARED_PULSAR_WEB_PORT = 28080;
export const SHARED_PULSAR_BOOKIE_PORT = 23181;

/** Binary protocol URL of the broker every test shares unless it starts its own. */
export const TEST_PULSAR_SERVICE_URL =
  process.env.EVGEN_TEST_PULSAR_SERVICE_URL ?? `pulsar://127.0.0.1:${SHARED_PULSAR_PORT}`;
/** HTTP base of the same broker: admin REST API under `/admin/v2`, WebSocket API under `/ws/v2`. */
export const TEST_PULSAR_WEB_URL =
  process.env.EVGEN_TEST_PULSAR_WEB_URL ?? `http://127.0.0.1:${SHARED_PULSAR_WEB_PORT}`;

const STARTER_CLASS = 'org.apache.pulsar.PulsarStandaloneStarter';
const POM = fileURLToPath(new URL('./pom.xml', import.meta.url));

/**
 * ~10 s to ready and 255–320 MB resident. The heap is not what drives the resident size (threads,
 * metaspace, RocksDB): a larger heap measured the same. The --add-opens are what Pulsar's own
 * launch script passes; without them Netty and the Linux metrics log reflective-access errors.
 */
export const PULSAR_JVM_FLAGS = [
  '-Xms64m',
  '-Xmx128m',
  '-XX:MaxDirectMemorySize=128m',
  '-XX:+UseSerialGC',
  '-XX:TieredStopAtLevel=1',
  '-XX:+ExitOnOutOfMemoryError',
  '-Djava.net.preferIPv4Stack=true',
  '-Dio.netty.tryReflectionSetAccessible=true',
  '--add-opens',
  'java.base/java.nio=ALL-UNNAMED',
  '--add-opens',
  'java.base/jdk.internal.misc=ALL-UNNAMED',
  '--add-opens',
  'java.base/sun.net=ALL-UNNAMED',
  '--add-opens',
  'java.management/sun.management=ALL-UNNAMED',
  '--add-opens',
  'jdk.management/com.sun.management.internal=ALL-UNNAMED',
  '--add-opens',
  'java.base/java.lang=ALL-UNNAMED',
  '--add-opens',
  'java.base/java.io=ALL-UNNAMED',
  '--add-opens',
  'java.base/jdk.internal.platform=ALL-UNNAMED',
  '--add-opens',
  'java.base/java.util.zip=ALL-UNNAMED',
];

/** Where the broker jars are cached (outside the repository). */
export function pulsarLibsDir(): string {
  const cache =
    process.env.EVGEN_PULSAR_CACHE ??
    join(homedir(), '.cache', 'evgen', `pulsar-${PULSAR_VERSION}`);
  return join(cache, 'libs');
}

/** Data dir of the shared broker (config, metadata, bookie journal, PID file, output, leases). */
export function sharedPulsarDataDir(): string {
  return process.env.EVGEN_PULSAR_DATA_DIR ?? join(tmpdir(), 'evgen-pulsar-shared');
}

export interface PulsarBrokerConfig {
  readonly port: number;
  readonly webPort: number;
  readonly bookiePort: number;
  readonly dataDir: string;
}

export interface RunningPulsarBroker extends PulsarBrokerConfig {
  readonly serviceUrl: string;
  readonly webUrl: string;
  /** undefined for a broker that answers but has no PID file of ours. */
  readonly pid: number | undefined;
  /** true when this call started the process, false when it was already running. */
  readonly started: boolean;
  /** Milliseconds from spawning the JVM to the admin API listing `public/default` (when started). */
  readonly startMs: number | undefined;
}

// ---------------------------------------------------------------------------------------------
// Jars

/** Downloads the broker jars into the cache once (Maven Central through `mvn`). */
export function ensurePulsarJars(): string {
  // The jars copy-dependencies writes are not ordered; these are the ones a start needs most.
  return fetchMavenJars(
    POM,
    pulsarLibsDir(),
    [
      `pulsar-broker-${PULSAR_VERSION}.jar`,
      `pulsar-websocket-${PULSAR_VERSION}.jar`,
      `managed-ledger-${PULSAR_VERSION}.jar`,
    ],
    `the Pulsar ${PULSAR_VERSION} broker jars`,
  );
}

// ---------------------------------------------------------------------------------------------
// Configuration

/**
 * The standalone config. The embedded bookie reads the same file as its BookKeeper
 * configuration, which is why bookie keys (journal, listening interface) are here too.
 */
function standaloneConf(config: PulsarBrokerConfig): string {
  return [
    'clusterName=standalone',
    'bindAddress=127.0.0.1',
    'advertisedAddress=127.0.0.1',
    `brokerServicePort=${config.port}`,
    `webServicePort=${config.webPort}`,
    // Blank: RocksDB metadata under --metadata-dir. `memory:` does not work in standalone (the
    // bookie and the broker would get separate stores: "Not enough bookies").
    'metadataStoreUrl=',
    'managedLedgerDefaultEnsembleSize=1',
    'managedLedgerDefaultWriteQuorum=1',
    'managedLedgerDefaultAckQuorum=1',
    // evgen's WebSocket client route needs the broker's WebSocket API.
    'webSocketServiceEnabled=true',
    'allowAutoTopicCreation=true',
    'allowAutoTopicCreationType=non-partitioned',
    'brokerDeleteInactiveTopicsEnabled=false',
    // Tests delete their namespaces with whatever topics are left in them.
    'forceDeleteNamespaceAllowed=true',
    'authenticationEnabled=false',
    'authorizationEnabled=false',
    // Bookie side. Without allowEphemeralPorts the bookie ignores --bookkeeper-port and binds
    // 0.0.0.0 on a random port; listeningInterface + allowLoopback keep it on loopback.
    'journalSyncData=false',
    'httpServerEnabled=false',
    'listeningInterface=lo',
    'allowLoopback=true',
    'allowEphemeralPorts=true',
    '',
  ].join('\n');
}

/** Plain console logging at WARN: without a config log4j2 prints errors only, INFO is ~1 MB/start. */
const LOG4J2_XML = `<?xml version="1.0" encoding="UTF-8"?>
<Configuration status="WARN">
  <Appenders>
    <Console name="console" target="SYSTEM_OUT">
      <PatternLayout pattern="%d{ISO8601} %-5level %c{1.} - %msg%n"/>
    </Console>
  </Appenders>
  <Loggers>
    <Logger name="org.apache.pulsar.PulsarStandalone" level="info"/>
    <Root level="warn"><AppenderRef ref="console"/></Root>
  </Loggers>
</Configuration>
`;

const pidFile = (dataDir: string) => join(dataDir, 'pulsar.pid');
const logFile = (dataDir: string) => join(dataDir, 'pulsar.out');

// ---------------------------------------------------------------------------------------------
// Starting and stopping

/**
 * Starts a broker for `config` unless one already answers on its web port. `fresh` deletes the
 * metadata and bookie data first (a new broker); without it a restart keeps the topics and
 * unacknowledged messages (what a fault test needs). Resolves when the admin API lists
 * `public/default`.
 */
export async function startPulsarBroker(
  config: PulsarBrokerConfig,
  options: { readonly fresh?: boolean; readonly readyTimeoutMs?: number } = {},
): Promise<RunningPulsarBroker> {
  const urls = {
    serviceUrl: `pulsar://127.0.0.1:${config.port}`,
    webUrl: `http://127.0.0.1:${config.webPort}`,
  };
  const readyTimeoutMs = options.readyTimeoutMs ?? 180_000;
  mkdirSync(config.dataDir, { recursive: true });
  const outcome = await withLockAsync(join(config.dataDir, 'start.lock'), async () => {
    if (await pulsarAnswers(urls.webUrl)) {
      return { pid: readPid(config.dataDir), started: false, startMs: undefined };
    }
    const stale = readPid(config.dataDir);
    if (stale !== undefined && isPulsarProcess(stale)) {
      // Still starting (another run launched it): wait for it rather than start a twin.
      await waitForPulsar(urls.webUrl, readyTimeoutMs, stale, config.dataDir);
      return { pid: stale, started: false, startMs: undefined };
    }
    const libs = ensurePulsarJars();
    if (options.fresh === true) {
      for (const dir of ['metadata', 'bookkeeper', 'zookeeper']) {
        rmSync(join(config.dataDir, dir), { recursive: true, force: true });
      }
    }
    const conf = join(config.dataDir, 'standalone.conf');
    const log4j = join(config.dataDir, 'log4j2.xml');
    writeFileSync(conf, standaloneConf(config));
    writeFileSync(log4j, LOG4J2_XML);
    const out = openSync(logFile(config.dataDir), 'a');
    const began = Date.now();
    const child = spawn(
      'java',
      [
        ...PULSAR_JVM_FLAGS,
        `-Dlog4j2.configurationFile=${log4j}`,
        '-cp',
        `${libs}/*`,
        STARTER_CLASS,
        '-c',
        conf,
        '-nfw',
        '-nss',
        '--metadata-dir',
        join(config.dataDir, 'metadata'),
        '--bookkeeper-dir',
        join(config.dataDir, 'bookkeeper'),
        '--bookkeeper-port',
        String(config.bookiePort),
      ],
      { detached: true, stdio: ['ignore', out, out] },
    );
    closeSync(out);
    child.unref();
    const pid = child.pid;
    if (pid === undefined) throw new Error('could not spawn java for the Pulsar broker');
    writeFileSync(pidFile(config.dataDir), `${pid}\n`);
    await waitForPulsar(urls.webUrl, readyTimeoutMs, pid, config.dataDir);
    return { pid, started: true, startMs: Date.now() - began };
  });
  return { ...config, ...urls, ...outcome };
}

export function sharedPulsarConfig(): PulsarBrokerConfig {
  return {
    port: SHARED_PULSAR_PORT,
    webPort: SHARED_PULSAR_WEB_PORT,
    bookiePort: SHARED_PULSAR_BOOKIE_PORT,
    dataDir: sharedPulsarDataDir(),
  };
}

/** Reuses the shared broker when it answers, starts a fresh one otherwise. */
export function ensureSharedPulsarBroker(): Promise<RunningPulsarBroker> {
  return startPulsarBroker(sharedPulsarConfig(), { fresh: true });
}

/**
 * Stops the broker whose PID file is in `dataDir` (SIGTERM, then SIGKILL after `graceMs`; it
 * takes ~4 s to stop) and resolves when the process is gone. Only a PID that still runs the
 * standalone starter is signalled. Returns false when none of ours was running.
 */
export async function stopPulsarBroker(dataDir: string, graceMs = 20_000): Promise<boolean> {
  const pid = readPid(dataDir);
  if (pid === undefined || !isPulsarProcess(pid)) {
    rmSync(pidFile(dataDir), { force: true });
    return false;
  }
  signal(pid, 'SIGCONT'); // a paused broker cannot act on SIGTERM
  signal(pid, 'SIGTERM');
  if (!(await waitForPulsarExit(pid, graceMs))) {
    if (isPulsarProcess(pid)) signal(pid, 'SIGKILL');
    await waitForPulsarExit(pid, 10_000);
  }
  rmSync(pidFile(dataDir), { force: true });
  return true;
}

/** Stops the shared broker and deletes its data (the jar cache stays). */
export async function stopSharedPulsarBroker(): Promise<boolean> {
  const dataDir = sharedPulsarDataDir();
  const stopped = await stopPulsarBroker(dataDir);
  if (stopped) {
    for (const dir of ['metadata', 'bookkeeper']) {
      rmSync(join(dataDir, dir), { recursive: true, force: true });
    }
  }
  return stopped;
}

// ---------------------------------------------------------------------------------------------
// Leases: the shared broker runs while any vitest run that needs it runs

const leasesDir = (dataDir: string) => join(dataDir, 'leases');

/** Records that process `pid` uses the shared broker. */
export function takePulsarLease(dataDir: string, pid = process.pid): void {
  mkdirSync(leasesDir(dataDir), { recursive: true });
  writeFileSync(join(leasesDir(dataDir), String(pid)), '');
}

/**
 * Drops the lease of `pid` and stops the shared broker when no live process holds one any more
 * (leases of processes that died are ignored). Returns true when it stopped the broker.
 */
export async function releasePulsarLease(dataDir: string, pid = process.pid): Promise<boolean> {
  return withLockAsync(join(dataDir, 'start.lock'), async () => {
    rmSync(join(leasesDir(dataDir), String(pid)), { force: true });
    const holders = existsSync(leasesDir(dataDir))
      ? readdirSync(leasesDir(dataDir)).filter((name) => processAlive(Number(name)))
      : [];
    if (holders.length > 0) return false;
    rmSync(leasesDir(dataDir), { recursive: true, force: true });
    const stopped = await stopPulsarBroker(dataDir);
    for (const dir of ['metadata', 'bookkeeper']) {
      rmSync(join(dataDir, dir), { recursive: true, force: true });
    }
    return stopped;
  });
}

// ---------------------------------------------------------------------------------------------
// Extra brokers for tests that kill, pause or restart one

export interface ExtraPulsarBroker {
  readonly serviceUrl: string;
  readonly webUrl: string;
  readonly port: number;
  readonly webPort: number;
  readonly dataDir: string;
  pid(): number | undefined;
  /** SIGKILL the process (its PID, checked to run the starter) and wait until it is gone. */
  kill(): Promise<void>;
  /** SIGSTOP: the process keeps its sockets open but answers nothing. */
  pause(): void;
  /** SIGCONT after `pause`. */
  resume(): void;
  /** Start it again on the same ports and data (after `kill`); resolves when it answers. */
  restart(): Promise<void>;
  /** Stop it and delete its data dir. */
  destroy(): Promise<void>;
}

/** Starts a broker of its own (free ports, fresh data dir under the temp folder). */
export async function startExtraPulsarBroker(): Promise<ExtraPulsarBroker> {
  const [port, webPort, bookiePort] = await freePorts(3);
  const dataDir = join(tmpdir(), `evgen-pulsar-extra-${randomBytes(4).toString('hex')}`);
  const config: PulsarBrokerConfig = {
    port: port!,
    webPort: webPort!,
    bookiePort: bookiePort!,
    dataDir,
  };
  try {
    await startPulsarBroker(config, { fresh: true });
  } catch (error) {
    await stopPulsarBroker(dataDir, 5_000).catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  const running = () => {
    const pid = readPid(dataDir);
    if (pid === undefined || !isPulsarProcess(pid)) {
      throw new Error(`no running Pulsar process recorded in ${pidFile(dataDir)}`);
    }
    return pid;
  };
  return {
    serviceUrl: `pulsar://127.0.0.1:${config.port}`,
    webUrl: `http://127.0.0.1:${config.webPort}`,
    port: config.port,
    webPort: config.webPort,
    dataDir,
    pid: () => readPid(dataDir),
    async kill() {
      const pid = running();
      signal(pid, 'SIGKILL');
      if (!(await waitForPulsarExit(pid, 15_000))) {
        throw new Error(`Pulsar broker ${pid} still running 15 s after SIGKILL`);
      }
      rmSync(pidFile(dataDir), { force: true });
    },
    pause: () => signal(running(), 'SIGSTOP'),
    resume: () => signal(running(), 'SIGCONT'),
    async restart() {
      const result = await startPulsarBroker(config);
      if (!result.started) throw new Error(`extra broker on ${config.port} was still running`);
    },
    async destroy() {
      await stopPulsarBroker(dataDir, 10_000);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Readiness: the admin REST API

/** true when the admin API at `webUrl` lists the `public/default` namespace. */
export async function pulsarAnswers(webUrl: string, timeoutMs = 2_000): Promise<boolean> {
  try {
    const response = await fetch(`${webUrl}/admin/v2/namespaces/public`, {
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!response.ok) return false;
    const namespaces = await response.json();
    return Array.isArray(namespaces) && namespaces.includes('public/default');
  } catch {
    return false;
  }
}

function waitForPulsar(
  webUrl: string,
  timeoutMs: number,
  pid: number,
  dataDir: string,
): Promise<void> {
  return waitUntilAnswering(
    `Pulsar broker (pid ${pid}) for ${webUrl}`,
    () => pulsarAnswers(webUrl),
    () => isPulsarProcess(pid),
    timeoutMs,
    () => tail(logFile(dataDir)),
  );
}

// ---------------------------------------------------------------------------------------------
// Process helpers

function readPid(dataDir: string): number | undefined {
  return readPidFile(pidFile(dataDir));
}

/** true while `pid` is a live (not zombie) process whose command line runs the standalone starter. */
export function isPulsarProcess(pid: number): boolean {
  return runsJavaClass(pid, STARTER_CLASS);
}

function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

function signal(pid: number, name: NodeJS.Signals): void {
  if (isPulsarProcess(pid)) process.kill(pid, name);
}

function waitForPulsarExit(pid: number, timeoutMs: number): Promise<boolean> {
  return waitForExit(() => isPulsarProcess(pid), timeoutMs);
}
