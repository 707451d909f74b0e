/**
 * The catalogs a repository depends on: events another repository produces and this one reads.
 * A consumer names them in `evgen.config.json` (`"catalogs": {"orders": "@acme/orders-catalog"}`);
 * each is an installed catalog package (a package whose `package.json` says where its events
 * folder is: `"evgen": {"catalog": "events"}`, default `events`, and, when the producer sets
 * `naming.eventType`, the same template as `"evgen": {"eventType": …}`; and how its events are
 * written on Kafka as `"evgen": {"wireFormat": "json" | "confluent"}`) or a folder given as a path.
 *
 * Only the dependency's events are read from it: consumer declarations live in the consumer's own
 * events folder (`_consumers/`), and the dependency's lock stays its own (one lock per catalog).
 */
import { readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { CatalogError, type CatalogProblem } from './catalog-error.js';
import { displayPath } from './read-json-file.js';
import { KAFKA_WIRE_FORMATS, type KafkaWireFormat } from './model.js';

/** A dependency's name in the config: kebab-case, as it names the pin file. */
export const CATALOG_NAME_PATTERN = '^[a-z][a-z0-9]*(-[a-z0-9]+)*$';

/** One entry of `catalogs` in the config, as written. */
export interface CatalogDependencySpec {
  /** The name the consumer gives it (`orders`). */
  readonly name: string;
  /** A package name (`@acme/orders-catalog`) or a path (`./vendor/orders`). */
  readonly source: string;
  /** Absolute folder paths and packages are resolved from (the config file's folder). */
  readonly base: string;
}

/** A dependency found on disk. */
export interface CatalogDependency {
  readonly name: string;
  readonly source: string;
  /** Absolute events folder of the dependency. */
  readonly eventsDir: string;
  /** `name@version` of the installed package; undefined for a folder. */
  readonly packageId: string | undefined;
  /** The producer's event type template (`"evgen": {"eventType": …}`); undefined = the default. */
  readonly eventTypeFormat: string | undefined;
  /** How the producer writes its events on Kafka (`"evgen": {"wireFormat": …}`); default `json`. */
  readonly wireFormat: KafkaWireFormat;
}

/** The `package.json` key that marks a catalog package and names its events folder. */
export const CATALOG_PACKAGE_KEY = 'evgen';
export const DEFAULT_PACKAGE_CATALOG_DIR = 'events';

interface PackageJson {
  readonly name?: unknown;
  readonly version?: unknown;
  readonly evgen?: {
    readonly catalog?: unknown;
    readonly eventType?: unknown;
    readonly wireFormat?: unknown;
  };
}

function isPath(source: string): boolean {
  return source.startsWith('./') || source.startsWith('../') || isAbsolute(source);
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** The nearest `node_modules/<name>` from `base` upwards, as Node resolves packages. */
function findInstalledPackage(name: string, base: string): string | undefined {
  for (let dir = base; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', ...name.split('/'));
    if (isDirectory(candidate)) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}

function readPackageJson(dir: string): PackageJson | undefined {
  try {
    const value: unknown = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    if (typeof value !== 'object' || value === null) return undefined;
    return value;
  } catch {
    return undefined;
  }
}

/**
 * The events folder of a catalog package folder: where `"evgen": {"catalog": …}` points, else
 * `events/`. Throws a problem naming the package when the key is malformed or escapes the package.
 */
export function packageCatalogDir(packageDir: string, file: string): string {
  const catalog = readPackageJson(packageDir)?.[CATALOG_PACKAGE_KEY]?.catalog;
  if (catalog === undefined) return join(packageDir, DEFAULT_PACKAGE_CATALOG_DIR);
  const inside =
    typeof catalog === 'string' &&
    catalog !== '' &&
    !isAbsolute(catalog) &&
    !catalog.split(/[\\/]/).includes('..');
  if (!inside) {
    throw new CatalogError([
      {
        code: 'invalid-catalog-package',
        file,
        pointer: `/${CATALOG_PACKAGE_KEY}/catalog`,
        message: `${JSON.stringify(catalog)} is not a folder inside the package`,
        hint: 'set "evgen": {"catalog": "events"}: the events folder, relative to package.json',
      },
    ]);
  }
  return join(packageDir, catalog);
}

/** The producer's event type template a catalog package declares (`"evgen": {"eventType": …}`). */
export function packageEventTypeFormat(packageDir: string): string | undefined {
  const format = readPackageJson(packageDir)?.[CATALOG_PACKAGE_KEY]?.eventType;
  return typeof format === 'string' ? format : undefined;
}

/**
 * The catalog's Kafka wire format a catalog package declares (`"evgen": {"wireFormat": …}`),
 * default `json`. Throws a problem naming package.json and the key for any other value: guessing
 * would make the consumer's tools misread every record.
 */
export function packageWireFormat(packageDir: string, file: string): KafkaWireFormat {
  const format = readPackageJson(packageDir)?.[CATALOG_PACKAGE_KEY]?.wireFormat;
  if (format === undefined) return 'json';
  if ((KAFKA_WIRE_FORMATS as readonly unknown[]).includes(format)) return format as KafkaWireFormat;
  throw new CatalogError([
    {
      code: 'invalid-catalog-package',
      file,
      pointer: `/${CATALOG_PACKAGE_KEY}/wireFormat`,
      message: `${JSON.stringify(format)} is not a Kafka wire format`,
      hint: `use one of ${KAFKA_WIRE_FORMATS.join(', ')}: how the producer writes the catalog's events on Kafka (default json; an event.json's kafka.wireFormat overrides it)`,
    },
  ]);
}

/** Resolves every dependency to its events folder; every missing one is reported together. */
export function resolveCatalogDependencies(
  specs: readonly CatalogDependencySpec[],
  configFile: string,
): CatalogDependency[] {
  const problems: CatalogProblem[] = [];
  const found: CatalogDependency[] = [];
  for (const spec of specs) {
    const pointer = `/catalogs/${spec.name}`;
    let packageDir: string | undefined;
    let eventsDir: string;
    if (isPath(spec.source)) {
      const dir = resolve(spec.base, spec.source);
      // A folder may be a catalog package (package.json beside it) or an events folder itself.
      packageDir = readPackageJson(dir) === undefined ? undefined : dir;
      eventsDir = packageDir === undefined ? dir : packageCatalogDir(dir, displayPath(dir));
    } else {
      packageDir = findInstalledPackage(spec.source, spec.base);
      if (packageDir === undefined) {
        problems.push({
          code: 'catalog-not-installed',
          file: configFile,
          pointer,
          message: `catalog package ${JSON.stringify(spec.source)} is not installed`,
          hint: `install it (npm install --save-exact ${spec.source}), or name a folder with "./…"`,
        });
        continue;
      }
      eventsDir = packageCatalogDir(packageDir, displayPath(join(packageDir, 'package.json')));
    }
    if (!isDirectory(eventsDir)) {
      problems.push({
        code: 'catalog-missing',
        file: configFile,
        pointer,
        message: `${displayPath(eventsDir)} (catalog ${spec.name}) does not exist or is not a folder`,
        hint: 'a catalog package holds its events folder (see evgen catalog check-package); a folder entry names an events folder',
      });
      continue;
    }
    const pkg = packageDir === undefined ? undefined : readPackageJson(packageDir);
    const packageId =
      pkg === undefined
        ? undefined
        : `${typeof pkg.name === 'string' ? pkg.name : '?'}@${typeof pkg.version === 'string' ? pkg.version : '?'}`;
    const format = packageDir === undefined ? undefined : packageEventTypeFormat(packageDir);
    let wireFormat: KafkaWireFormat = 'json';
    try {
      if (packageDir !== undefined)
        wireFormat = packageWireFormat(packageDir, displayPath(join(packageDir, 'package.json')));
    } catch (error) {
      if (!(error instanceof CatalogError)) throw error;
      problems.push(...error.problems);
      continue;
    }
    found.push({
      name: spec.name,
      source: spec.source,
      eventsDir,
      packageId,
      eventTypeFormat: format,
      wireFormat,
    });
  }
  if (problems.length > 0) throw new CatalogError(problems);
  return found;
}
