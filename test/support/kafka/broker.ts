/**
 * A real single-node KRaft Apache Kafka 4.4.0 for the tests, started from Maven Central jars.
 *
 * - The jars are fetched once with the throwaway `pom.xml` beside this file into a cache folder
 *   outside the repository (`$EVGEN_KAFKA_CACHE`, default `~/.cache/evgen/kafka-4.4.0/libs`).
 * - The shared broker (127.0.0.1:19092, controller 19093, data in `<tmp>/evgen-kafka-shared`) is
 *   reused when it answers, started otherwise; its PID file lets `stop.ts` kill exactly it.
 * - Tests that kill or restart a broker start an extra instance with its own ports and data dir
 *   (`startExtraKafkaBroker`) and never touch the shared one.
 *
 * Readiness is a protocol answer (ApiVersions, then a Metadata response listing a broker), never a
 * sleep. A PID is only signalled after checking that it still runs `kafka.Kafka`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, Socket } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readPidFile, runsJavaClass, waitForExit, waitUntilAnswering } from '../broker-process.js';
import { withLockAsync } from '../file-lock.js';
import { fetchMavenJars } from '../maven-jars.js';

export const KAFKA_VERSION = '4.4.0';

/** The broker every test shares unless it starts its own: `host:port`. */
export const SHARED_KAFKA_PORT = 19092;
export const SHARED_KAFKA_CONTROLLER_PORT = 19093;
export const TEST_KAFKA_BROKERS =
  process.env.EVGEN_TEST_KAFKA_BROKERS ?? `127.0.0.1:${SHARED_KAFKA_PORT}`;

const POM = fileURLToPath(new URL('./pom.xml', import.meta.url));

/** Where the broker jars are cached (outside the repository). */
export function kafkaLibsDir(): string {
  const cache =
    process.env.EVGEN_KAFKA_CACHE ?? join(homedir(), '.cache', 'evgen', `kafka-${KAFKA_VERSION}`);
  return join(cache, 'libs');
}

/** Data dir of the shared broker (KRaft metadata, logs, PID file, broker output). */
export function sharedKafkaDataDir(): string {
  return process.env.EVGEN_KAFKA_DATA_DIR ?? join(tmpdir(), 'evgen-kafka-shared');
}

/** The JVM flags that start the broker in ~10–17 s with a small heap (the Connect worker uses them too). */
export const KAFKA_JVM_FLAGS = [
  '-Xms256m',
  '-Xmx256m',
  '-XX:+UseSerialGC',
  '-XX:TieredStopAtLevel=1',
  '-XX:+ExitOnOutOfMemoryError',
];

export interface KafkaBrokerConfig {
  readonly port: number;
  readonly controllerPort: number;
  readonly dataDir: string;
}

/** A broker this module started or found; `pid` is undefined for a reachable broker without our PID file. */
export interface RunningKafkaBroker extends KafkaBrokerConfig {
  readonly brokers: string;
  readonly pid: number | undefined;
  /** true when this call started the process, false when it was already running. */
  readonly started: boolean;
}

// ---------------------------------------------------------------------------------------------
// Jars

/** Downloads the broker jars into the cache once (Maven Central through `mvn`). */
export function ensureKafkaJars(): string {
  return fetchMavenJars(
    POM,
    kafkaLibsDir(),
    [`kafka_2.13-${KAFKA_VERSION}.jar`, /^log4j-slf4j-impl-/],
    `the Kafka ${KAFKA_VERSION} jars`,
  );
}

// ---------------------------------------------------------------------------------------------
// Starting and stopping

function serverProperties(config: KafkaBrokerConfig): string {
  const { port, controllerPort, dataDir } = config;
  return [
    'process.roles=broker,controller',
    'node.id=1',
    `listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
    'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'inter.broker.listener.name=PLAINTEXT',
    'controller.listener.names=CONTROLLER',
    `controller.quorum.bootstrap.servers=127.0.0.1:${controllerPort}`,
    `log.dirs=${join(dataDir, 'logs')}`,
    'num.partitions=1',
    'default.replication.factor=1',
    'min.insync.replicas=1',
    'offsets.topic.replication.factor=1',
    'offsets.topic.num.partitions=1',
    'transaction.state.log.replication.factor=1',
    'transaction.state.log.min.isr=1',
    'share.coordinator.state.topic.replication.factor=1',
    'share.coordinator.state.topic.min.isr=1',
    'group.initial.rebalance.delay.ms=0',
    // Tests create their topics explicitly; a typo must not silently create a new one.
    'auto.create.topics.enable=false',
    // The default 128 MiB dedupe buffer lives on the heap and makes a 256 MiB heap fail at start.
    'log.cleaner.dedupe.buffer.size=8388608',
    '',
  ].join('\n');
}

const pidFile = (dataDir: string) => join(dataDir, 'kafka.pid');
const logFile = (dataDir: string) => join(dataDir, 'kafka.out');

/**
 * Starts a broker for `config` unless one already answers on its port; formats the data dir on
 * first use (KRaft `--standalone`). Resolves when the broker answers ApiVersions and Metadata.
 */
export async function startKafkaBroker(
  config: KafkaBrokerConfig,
  options: { readonly readyTimeoutMs?: number } = {},
): Promise<RunningKafkaBroker> {
  const brokers = `127.0.0.1:${config.port}`;
  const readyTimeoutMs = options.readyTimeoutMs ?? 120_000;
  mkdirSync(config.dataDir, { recursive: true });
  const lock = join(config.dataDir, 'start.lock');
  const outcome = await withLockAsync(lock, async () => {
    if (await kafkaAnswers('127.0.0.1', config.port)) {
      return { pid: readPid(config.dataDir), started: false };
    }
    const stale = readPid(config.dataDir);
    if (stale !== undefined && isKafkaProcess(stale)) {
      // Still starting (another test run launched it) or hanging: wait for it rather than start a twin.
      await waitForKafka(brokers, config.port, readyTimeoutMs, stale, config.dataDir);
      return { pid: stale, started: false };
    }
    const libs = ensureKafkaJars();
    const properties = join(config.dataDir, 'server.properties');
    writeFileSync(properties, serverProperties(config));
    if (!existsSync(join(config.dataDir, 'logs', 'meta.properties'))) {
      const format = spawnSync(
        'java',
        [
          '-cp',
          `${libs}/*`,
          'kafka.tools.StorageTool',
          'format',
          '-t',
          randomClusterId(),
          '-c',
          properties,
          '--standalone',
        ],
        { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
      );
      if (format.error || format.status !== 0) {
        throw new Error(
          `kafka StorageTool format failed for ${config.dataDir}: ${format.error?.message ?? ''}\n${format.stdout}${format.stderr}`,
        );
      }
    }
    const out = openSync(logFile(config.dataDir), 'a');
    const child = spawn(
      'java',
      [...KAFKA_JVM_FLAGS, '-cp', `${libs}/*`, 'kafka.Kafka', properties],
      {
        detached: true,
        stdio: ['ignore', out, out],
      },
    );
    closeSync(out);
    child.unref();
    const pid = child.pid;
    if (pid === undefined) throw new Error('could not spawn java for the Kafka broker');
    writeFileSync(pidFile(config.dataDir), `${pid}\n`);
    await waitForKafka(brokers, config.port, readyTimeoutMs, pid, config.dataDir);
    return { pid, started: true };
  });
  return { ...config, brokers, ...outcome };
}

/** Reuses the shared broker when it answers, starts it otherwise. */
export function ensureSharedKafkaBroker(): Promise<RunningKafkaBroker> {
  return startKafkaBroker({
    port: SHARED_KAFKA_PORT,
    controllerPort: SHARED_KAFKA_CONTROLLER_PORT,
    dataDir: sharedKafkaDataDir(),
  });
}

/**
 * Stops the broker whose PID file is in `dataDir` (SIGTERM, then SIGKILL after `graceMs`) and
 * resolves when the process is gone. Only a PID that still runs `kafka.Kafka` is signalled.
 */
export async function stopKafkaBroker(dataDir: string, graceMs = 30_000): Promise<boolean> {
  const pid = readPid(dataDir);
  if (pid === undefined || !isKafkaProcess(pid)) {
    rmSync(pidFile(dataDir), { force: true });
    return false;
  }
  process.kill(pid, 'SIGTERM');
  if (!(await waitForKafkaExit(pid, graceMs))) {
    if (isKafkaProcess(pid)) process.kill(pid, 'SIGKILL');
    await waitForKafkaExit(pid, 10_000);
  }
  rmSync(pidFile(dataDir), { force: true });
  return true;
}

/** SIGKILLs the broker of `dataDir` and resolves once its process is really gone. */
export async function killKafkaBroker(dataDir: string): Promise<void> {
  const pid = readPid(dataDir);
  if (pid === undefined || !isKafkaProcess(pid)) {
    throw new Error(`no running kafka.Kafka process recorded in ${pidFile(dataDir)}`);
  }
  process.kill(pid, 'SIGKILL');
  if (!(await waitForKafkaExit(pid, 15_000))) {
    throw new Error(`kafka broker ${pid} still running 15 s after SIGKILL`);
  }
  rmSync(pidFile(dataDir), { force: true });
}

// ---------------------------------------------------------------------------------------------
// Extra brokers for tests that kill or restart one

export interface ExtraKafkaBroker {
  /** `127.0.0.1:<port>` */
  readonly brokers: string;
  readonly port: number;
  readonly dataDir: string;
  pid(): number | undefined;
  /** SIGKILL the process (its PID, checked to be `kafka.Kafka`) and wait until it is gone. */
  kill(): Promise<void>;
  /** Start it again on the same ports and data (after `kill`/`stop`); resolves when it answers. */
  restart(): Promise<void>;
  /** Stop it and delete its data dir. */
  destroy(): Promise<void>;
}

/** Starts a broker of its own (free ports, fresh data dir under the temp folder). */
export async function startExtraKafkaBroker(): Promise<ExtraKafkaBroker> {
  const [port, controllerPort] = await freePorts(2);
  const dataDir = join(tmpdir(), `evgen-kafka-extra-${randomBytes(4).toString('hex')}`);
  const config: KafkaBrokerConfig = { port: port!, controllerPort: controllerPort!, dataDir };
  try {
    await startKafkaBroker(config);
  } catch (error) {
    await stopKafkaBroker(dataDir, 5_000).catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  return {
    brokers: `127.0.0.1:${config.port}`,
    port: config.port,
    dataDir,
    pid: () => readPid(dataDir),
    kill: () => killKafkaBroker(dataDir),
    async restart() {
      const result = await startKafkaBroker(config);
      if (!result.started) throw new Error(`extra broker on ${config.port} was still running`);
    },
    async destroy() {
      await stopKafkaBroker(dataDir, 10_000);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Readiness: the Kafka protocol itself

/** true when `host:port` answers ApiVersions without error and Metadata lists at least one broker. */
export async function kafkaAnswers(
  host: string,
  port: number,
  timeoutMs = 2_000,
): Promise<boolean> {
  try {
    const versions = await kafkaRequest(host, port, apiVersionsRequest(), timeoutMs);
    // ApiVersions response v0: correlation id (4), error code (2), ...
    if (versions.readInt16BE(4) !== 0) return false;
    const metadata = await kafkaRequest(host, port, metadataRequest(), timeoutMs);
    // Metadata response v4: correlation id (4), throttle time (4), brokers array length (4), ...
    return metadata.readInt32BE(8) > 0;
  } catch {
    return false;
  }
}

/** Request header v1: api key, api version, correlation id, client id. */
function requestFrame(apiKey: number, apiVersion: number, body: Buffer): Buffer {
  const clientId = Buffer.from('evgen-test-readiness');
  const header = Buffer.alloc(10 + clientId.length);
  header.writeInt16BE(apiKey, 0);
  header.writeInt16BE(apiVersion, 2);
  header.writeInt32BE(1, 4);
  header.writeInt16BE(clientId.length, 8);
  clientId.copy(header, 10);
  const size = Buffer.alloc(4);
  size.writeInt32BE(header.length + body.length);
  return Buffer.concat([size, header, body]);
}

const apiVersionsRequest = () => requestFrame(18, 0, Buffer.alloc(0));

/** Metadata v4 for no topics (empty array) without auto-creation: we only want the broker list. */
function metadataRequest(): Buffer {
  const body = Buffer.alloc(5);
  body.writeInt32BE(0, 0);
  body.writeInt8(0, 4);
  return requestFrame(3, 4, body);
}

/** Sends one framed request and resolves with the response body (without its size prefix). */
function kafkaRequest(
  host: string,
  port: number,
  frame: Buffer,
  timeoutMs: number,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = new Socket();
    let received = Buffer.alloc(0);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no Kafka answer from ${host}:${port} within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (received.length >= 4 && received.length >= 4 + received.readInt32BE(0)) {
        clearTimeout(timer);
        socket.destroy();
        resolve(received.subarray(4, 4 + received.readInt32BE(0)));
      }
    });
    socket.once('close', () => {
      clearTimeout(timer);
      reject(new Error(`connection to ${host}:${port} closed before a Kafka answer`));
    });
    socket.connect(port, host, () => socket.write(frame));
  });
}

function waitForKafka(
  brokers: string,
  port: number,
  timeoutMs: number,
  pid: number,
  dataDir: string,
): Promise<void> {
  return waitUntilAnswering(
    `Kafka broker (pid ${pid}) for ${brokers}`,
    () => kafkaAnswers('127.0.0.1', port),
    () => isKafkaProcess(pid),
    timeoutMs,
    () => tail(logFile(dataDir)),
  );
}

// ---------------------------------------------------------------------------------------------
// Process and file helpers

function readPid(dataDir: string): number | undefined {
  return readPidFile(pidFile(dataDir));
}

/** true while `pid` is a live (not zombie) process whose command line runs `kafka.Kafka`. */
export function isKafkaProcess(pid: number): boolean {
  return runsJavaClass(pid, 'kafka.Kafka');
}

function waitForKafkaExit(pid: number, timeoutMs: number): Promise<boolean> {
  return waitForExit(() => isKafkaProcess(pid), timeoutMs);
}

/**
 * A KRaft cluster id: 16 random bytes, base64url without padding (what `random-uuid` prints).
 * Like Kafka's own Uuid.randomUuid it never starts with '-': StorageTool's argument parser would
 * read such an id as an option and fail ("--cluster-id: expected one argument"), 1 run in 64.
 */
export function randomClusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

export function freePorts(count: number): Promise<number[]> {
  const servers = Array.from({ length: count }, () => createServer());
  return Promise.all(
    servers.map(
      (server) =>
        new Promise<number>((resolve, reject) => {
          server.once('error', reject);
          server.listen(0, '127.0.0.1', () => {
            const address = server.address();
            resolve(typeof address === 'object' && address ? address.port : 0);
          });
        }),
    ),
  ).finally(() => servers.forEach((server) => server.close()));
}

export function tail(file: string, lines = 30): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no output)';
  }
}
