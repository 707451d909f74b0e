/**
 * A real Kafka Connect 4.4.0 worker (distributed mode) with the Debezium plugins, beside a Kafka
 * broker of the tests (the shared one or a private one). Each worker gets its own REST port,
 * group id and internal topics, so workers of different test files never meet; a test file
 * shares one worker because a start takes seconds.
 *
 * - `exactlyOnce: true` starts it with `exactly.once.source.support=enabled` (transactional
 *   source tasks; connectors may then ask for `exactly.once.support=required`).
 * - The worker resolves `${env:NAME}` in connector configs (EnvVarConfigProvider), as the
 *   generated connector configs expect for the database password.
 * - `kill()` is a SIGKILL of exactly this worker's PID (checked by its command line), `restart()`
 *   starts it again with the same group and topics, so it resumes from its committed offsets.
 *
 * Readiness is an answer of the REST API, never a sleep.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts, KAFKA_JVM_FLAGS, tail } from '../kafka/broker.js';
import { ensureConnectJars } from './connect-jars.js';

const MAIN_CLASS = 'org.apache.kafka.connect.cli.ConnectDistributed';

export interface ConnectWorkerOptions {
  /** `host:port` of the Kafka broker. */
  readonly brokers: string;
  readonly exactlyOnce?: boolean;
  /**
   * How often source offsets are committed (`offset.flush.interval.ms`, default 1 s). A long one
   * makes a killed at-least-once worker re-send everything it had sent.
   */
  readonly offsetFlushIntervalMs?: number;
  /** Environment of the worker process (read by `${env:NAME}` in connector configs). */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * JVM flags instead of the broker's start-up-friendly ones (C1 only, 256 MB): a benchmark runs
   * the worker as an operator would, with the full JIT.
   */
  readonly jvmFlags?: readonly string[];
  /** More worker properties (`key=value` lines after the defaults, so they win). */
  readonly properties?: Readonly<Record<string, string>>;
  readonly readyTimeoutMs?: number;
}

export interface ConnectorStatus {
  readonly connector: { readonly state: string; readonly trace?: string };
  readonly tasks: readonly {
    readonly id: number;
    readonly state: string;
    readonly trace?: string;
  }[];
}

export interface ConnectWorker {
  /** `http://127.0.0.1:<port>` */
  readonly restUrl: string;
  readonly groupId: string;
  /** The worker's config, offset and status topics (delete them after the test). */
  readonly internalTopics: readonly string[];
  pid(): number | undefined;
  /** PUT /connectors/<name>/config, retried while the worker is (re)joining its group. */
  putConnector(name: string, config: Readonly<Record<string, string>>): Promise<void>;
  status(name: string): Promise<ConnectorStatus | undefined>;
  /** Resolves when the connector and all its tasks are RUNNING; a FAILED one throws with its trace. */
  waitForRunning(name: string, timeoutMs?: number): Promise<void>;
  deleteConnector(name: string): Promise<void>;
  /** SIGKILL (the worker gets no chance to flush or commit anything) and wait until it is gone. */
  kill(): Promise<void>;
  /** SIGTERM and wait until it is gone: a clean stop, which commits the tasks' source offsets. */
  stop(): Promise<void>;
  /** Starts the worker again with the same configuration; resolves when its REST API answers. */
  restart(): Promise<void>;
  /** SIGTERM (then SIGKILL) and delete its folder. */
  destroy(): Promise<void>;
  /** The last lines of the worker's log, for failure messages. */
  logTail(lines?: number): string;
}

export async function startConnectWorker(options: ConnectWorkerOptions): Promise<ConnectWorker> {
  const { libs, plugins } = ensureConnectJars();
  const dir = mkdtempSync(join(tmpdir(), 'evgen-connect-'));
  const [port] = await freePorts(1);
  const groupId = `evgen-connect-${randomBytes(4).toString('hex')}`;
  const internalTopics = [`${groupId}.configs`, `${groupId}.offsets`, `${groupId}.status`];
  const restUrl = `http://127.0.0.1:${port}`;
  const properties = join(dir, 'worker.properties');
  const log4j = join(dir, 'log4j2.properties');
  const logFile = join(dir, 'worker.log');
  writeFileSync(
    properties,
    [
      `bootstrap.servers=${options.brokers}`,
      `group.id=${groupId}`,
      'key.converter=org.apache.kafka.connect.storage.StringConverter',
      'value.converter=org.apache.kafka.connect.storage.StringConverter',
      `config.storage.topic=${internalTopics[0]}`,
      `offset.storage.topic=${internalTopics[1]}`,
      `status.storage.topic=${internalTopics[2]}`,
      'config.storage.replication.factor=1',
      'offset.storage.replication.factor=1',
      'status.storage.replication.factor=1',
      'offset.storage.partitions=1',
      'status.storage.partitions=1',
      `offset.flush.interval.ms=${options.offsetFlushIntervalMs ?? 1_000}`,
      `listeners=http://127.0.0.1:${port}`,
      'rest.advertised.host.name=127.0.0.1',
      `rest.advertised.port=${port}`,
      `plugin.path=${plugins}`,
      // Every plugin folder has ServiceLoader manifests: no class-path scan at start.
      'plugin.discovery=service_load',
      // A killed worker's session expires after 6 s (the broker's minimum), so a restart rejoins soon.
      'session.timeout.ms=6000',
      'heartbeat.interval.ms=2000',
      'scheduled.rebalance.max.delay.ms=0',
      'config.providers=env',
      'config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider',
      ...(options.exactlyOnce ? ['exactly.once.source.support=enabled'] : []),
      ...Object.entries(options.properties ?? {}).map(([key, value]) => `${key}=${value}`),
      '',
    ].join('\n'),
  );
  writeFileSync(
    log4j,
    [
      'status = error',
      'appender.console.type = Console',
      'appender.console.name = console',
      'appender.console.layout.type = PatternLayout',
      'appender.console.layout.pattern = [%d] %p %m (%c)%n',
      'rootLogger.level = INFO',
      'rootLogger.appenderRef.console.ref = console',
      'logger.clients.name = org.apache.kafka.clients',
      'logger.clients.level = WARN',
      'logger.common.name = org.apache.kafka.common',
      'logger.common.level = WARN',
      '',
    ].join('\n'),
  );

  let child: ChildProcess | undefined;
  const isOurWorker = (pid: number): boolean => {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      if (/^State:\s+Z/m.test(status)) return false;
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      return cmdline.includes(MAIN_CLASS) && cmdline.includes(properties);
    } catch {
      return false;
    }
  };
  const waitForExit = async (pid: number, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!isOurWorker(pid)) return true;
      await delay(100);
    }
    return !isOurWorker(pid);
  };
  const logTail = (lines = 40) => tail(logFile, lines);

  const launch = async () => {
    const out = openSync(logFile, 'a');
    child = spawn(
      'java',
      [
        ...(options.jvmFlags ?? KAFKA_JVM_FLAGS),
        `-Dlog4j2.configurationFile=${log4j}`,
        '-cp',
        `${libs}/*`,
        MAIN_CLASS,
        properties,
      ],
      { stdio: ['ignore', out, out], env: { ...process.env, ...options.env } },
    );
    closeSync(out);
    const pid = child.pid;
    if (pid === undefined) throw new Error('could not spawn java for the Kafka Connect worker');
    const deadline = Date.now() + (options.readyTimeoutMs ?? 120_000);
    for (;;) {
      if (!isOurWorker(pid)) {
        throw new Error(`Kafka Connect worker exited during start-up; last output:\n${logTail()}`);
      }
      const answer = await fetch(`${restUrl}/connectors`).catch(() => undefined);
      if (answer?.ok) return;
      if (Date.now() > deadline) {
        throw new Error(
          `Kafka Connect worker did not answer at ${restUrl}; last output:\n${logTail()}`,
        );
      }
      await delay(200);
    }
  };

  const request = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${restUrl}${path}`, {
      method,
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, text };
  };

  const worker: ConnectWorker = {
    restUrl,
    groupId,
    internalTopics,
    pid: () => child?.pid,
    async putConnector(name, config) {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const { status, text } = await request('PUT', `/connectors/${name}/config`, config);
        if (status === 200 || status === 201) return;
        // 409: a rebalance is in progress or expected; 500/503 while the herder is not ready.
        if (![409, 500, 503].includes(status) || Date.now() > deadline) {
          throw new Error(`PUT connector ${name}: HTTP ${status} ${text}\n${logTail()}`);
        }
        await delay(500);
      }
    },
    async status(name) {
      const { status, text } = await request('GET', `/connectors/${name}/status`);
      return status === 200 ? (JSON.parse(text) as ConnectorStatus) : undefined;
    },
    async waitForRunning(name, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const status = await worker.status(name).catch(() => undefined);
        const failed = [status?.connector, ...(status?.tasks ?? [])].find(
          (part) => part?.state === 'FAILED',
        );
        if (failed) throw new Error(`connector ${name} FAILED: ${failed.trace ?? ''}`);
        if (
          status?.connector.state === 'RUNNING' &&
          status.tasks.length > 0 &&
          status.tasks.every((task) => task.state === 'RUNNING')
        ) {
          return;
        }
        if (Date.now() > deadline) {
          throw new Error(
            `connector ${name} not RUNNING within ${timeoutMs} ms: ${JSON.stringify(status)}\n${logTail()}`,
          );
        }
        await delay(250);
      }
    },
    async deleteConnector(name) {
      const { status, text } = await request('DELETE', `/connectors/${name}`);
      if (status !== 204 && status !== 404) {
        throw new Error(`DELETE connector ${name}: HTTP ${status} ${text}`);
      }
    },
    async kill() {
      const pid = child?.pid;
      if (pid === undefined || !isOurWorker(pid))
        throw new Error('the Connect worker is not running');
      process.kill(pid, 'SIGKILL');
      if (!(await waitForExit(pid, 15_000))) {
        throw new Error(`Connect worker ${pid} still running 15 s after SIGKILL`);
      }
    },
    async stop() {
      const pid = child?.pid;
      if (pid === undefined || !isOurWorker(pid))
        throw new Error('the Connect worker is not running');
      process.kill(pid, 'SIGTERM');
      if (!(await waitForExit(pid, 60_000))) {
        throw new Error(`Connect worker ${pid} still running 60 s after SIGTERM\n${logTail()}`);
      }
    },
    async restart() {
      const pid = child?.pid;
      if (pid !== undefined && isOurWorker(pid)) throw new Error('the Connect worker still runs');
      await launch();
    },
    async destroy() {
      const pid = child?.pid;
      if (pid !== undefined && isOurWorker(pid)) {
        process.kill(pid, 'SIGTERM');
        if (!(await waitForExit(pid, 20_000)) && isOurWorker(pid)) {
          process.kill(pid, 'SIGKILL');
          await waitForExit(pid, 10_000);
        }
      }
      rmSync(dir, { recursive: true, force: true });
    },
    logTail,
  };

  try {
    await launch();
  } catch (error) {
    await worker.destroy();
    throw error;
  }
  return worker;
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
