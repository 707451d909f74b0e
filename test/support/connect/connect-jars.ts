/**
 * The jars a Kafka Connect 4.4.0 worker with Debezium needs, fetched from Maven Central once into
 * a cache folder outside the repository (`$EVGEN_CONNECT_CACHE`, default
 * `~/.cache/evgen/connect-4.4.0`), like the broker jars of test/support/kafka:
 *
 *   libs/                                the worker (connect-runtime, -json, -transforms, log4j)
 *   plugins/debezium-connector-postgres/ Debezium's PostgreSQL connector with its outbox EventRouter
 *   plugins/debezium-connector-mariadb/  Debezium's MariaDB connector (3.5.0: the newest there is;
 *                                        the 3.6 MySQL connector cannot read MariaDB)
 *   plugins/evgen-connect-transforms/    evgen's DropNullHeaders transform, compiled here with javac
 *
 * Every plugin folder carries ServiceLoader manifests, so the worker can run with
 * `plugin.discovery=service_load` (a start of seconds instead of a 10+ s class-path scan).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { withLock } from '../kafka/broker.js';

export const CONNECT_VERSION = '4.4.0';
export const DEBEZIUM_POSTGRES_VERSION = '3.6.1.Final';
export const DEBEZIUM_MARIADB_VERSION = '3.5.0.Final';

/** Plugin folder names under `plugins/`. */
export const DEBEZIUM_POSTGRES_PLUGIN = 'debezium-connector-postgres';
export const DEBEZIUM_MARIADB_PLUGIN = 'debezium-connector-mariadb';
export const EVGEN_TRANSFORMS_PLUGIN = 'evgen-connect-transforms';

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const TRANSFORM_SOURCE = fileURLToPath(
  new URL('../../../src/cdc/connect-transforms/DropNullHeaders.java', import.meta.url),
);

export interface ConnectJars {
  /** The worker's class path folder. */
  readonly libs: string;
  /** The worker's `plugin.path`. */
  readonly plugins: string;
}

export function connectCacheDir(): string {
  return (
    process.env.EVGEN_CONNECT_CACHE ??
    join(homedir(), '.cache', 'evgen', `connect-${CONNECT_VERSION}`)
  );
}

/** Fetches (first use) and returns the worker libs and plugin folders. */
export function ensureConnectJars(): ConnectJars {
  const cache = connectCacheDir();
  const libs = join(cache, 'libs');
  const plugins = join(cache, 'plugins');
  const postgres = join(plugins, DEBEZIUM_POSTGRES_PLUGIN);
  const mariadb = join(plugins, DEBEZIUM_MARIADB_PLUGIN);
  const transforms = join(plugins, EVGEN_TRANSFORMS_PLUGIN);
  const ready = () =>
    hasJar(libs, `connect-runtime-${CONNECT_VERSION}.jar`) &&
    hasJar(postgres, `debezium-connector-postgres-${DEBEZIUM_POSTGRES_VERSION}.jar`) &&
    hasJar(mariadb, `debezium-connector-mariadb-${DEBEZIUM_MARIADB_VERSION}.jar`) &&
    hasJar(transforms, `${EVGEN_TRANSFORMS_PLUGIN}.jar`);
  if (ready()) return { libs, plugins };
  mkdirSync(cache, { recursive: true });
  return withLock(join(cache, 'download.lock'), () => {
    if (!hasJar(libs, `connect-runtime-${CONNECT_VERSION}.jar`)) {
      copyDependencies(here('./worker-pom.xml'), libs);
    }
    if (!hasJar(postgres, `debezium-connector-postgres-${DEBEZIUM_POSTGRES_VERSION}.jar`)) {
      copyDependencies(here('./debezium-postgres-pom.xml'), postgres);
    }
    if (!hasJar(mariadb, `debezium-connector-mariadb-${DEBEZIUM_MARIADB_VERSION}.jar`)) {
      copyDependencies(here('./debezium-mariadb-pom.xml'), mariadb);
    }
    if (!hasJar(transforms, `${EVGEN_TRANSFORMS_PLUGIN}.jar`)) buildTransforms(libs, transforms);
    if (!ready()) throw new Error(`Kafka Connect jars incomplete in ${cache}`);
    return { libs, plugins };
  });
}

function hasJar(folder: string, jar: string): boolean {
  return existsSync(folder) && readdirSync(folder).includes(jar);
}

function run(command: string, args: readonly string[], what: string): void {
  const result = spawnSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (result.error || result.status !== 0) {
    throw new Error(
      `${what} failed (${command} ${args.join(' ')}): ${result.error?.message ?? ''}\n${result.stdout}${result.stderr}`,
    );
  }
}

function copyDependencies(pom: string, into: string): void {
  run(
    'mvn',
    [
      '-q',
      '-B',
      '-f',
      pom,
      'dependency:copy-dependencies',
      '-DincludeScope=runtime',
      `-DoutputDirectory=${into}`,
    ],
    `fetching the jars of ${pom} from Maven Central (is mvn installed and Central reachable?)`,
  );
}

/** Compiles DropNullHeaders against the worker's connect-api and packs it as a plugin. */
function buildTransforms(libs: string, into: string): void {
  const out = mkdtempSync(join(tmpdir(), 'evgen-connect-transforms-'));
  try {
    run('javac', ['--release', '17', '-cp', `${libs}/*`, '-d', out, TRANSFORM_SOURCE], 'javac');
    mkdirSync(join(out, 'META-INF', 'services'), { recursive: true });
    writeFileSync(
      join(out, 'META-INF', 'services', 'org.apache.kafka.connect.transforms.Transformation'),
      'dev.evgen.connect.DropNullHeaders\n',
    );
    mkdirSync(into, { recursive: true });
    run('jar', ['cf', join(into, `${EVGEN_TRANSFORMS_PLUGIN}.jar`), '-C', out, '.'], 'jar');
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
