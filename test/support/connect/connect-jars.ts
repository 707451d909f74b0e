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
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { withLock } from '../file-lock.js';
import { fetchMavenJars, hasJars, run } from '../maven-jars.js';

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
  fetchMavenJars(
    here('./worker-pom.xml'),
    libs,
    [`connect-runtime-${CONNECT_VERSION}.jar`],
    `the Kafka Connect ${CONNECT_VERSION} worker jars`,
  );
  fetchMavenJars(
    here('./debezium-postgres-pom.xml'),
    join(plugins, DEBEZIUM_POSTGRES_PLUGIN),
    [`debezium-connector-postgres-${DEBEZIUM_POSTGRES_VERSION}.jar`],
    `Debezium's PostgreSQL connector ${DEBEZIUM_POSTGRES_VERSION}`,
  );
  fetchMavenJars(
    here('./debezium-mariadb-pom.xml'),
    join(plugins, DEBEZIUM_MARIADB_PLUGIN),
    [`debezium-connector-mariadb-${DEBEZIUM_MARIADB_VERSION}.jar`],
    `Debezium's MariaDB connector ${DEBEZIUM_MARIADB_VERSION}`,
  );
  const transforms = join(plugins, EVGEN_TRANSFORMS_PLUGIN);
  const transformsJar = [`${EVGEN_TRANSFORMS_PLUGIN}.jar`];
  if (!hasJars(transforms, transformsJar)) {
    withLock(join(cache, 'transforms.lock'), () => {
      if (!hasJars(transforms, transformsJar)) buildTransforms(libs, transforms);
    });
  }
  return { libs, plugins };
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
