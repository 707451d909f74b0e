/**
 * The optional project config `evgen.config.json` (in the working folder, or given with
 * `--config`). Folders in it are relative to the config file; command-line flags override it.
 *
 *   { "events": "events", "out": "generated", "handlers": "handlers", "targets": ["types", …],
 *     "runtimeImport": "evgen-runtime", "naming": { "eventType": "{domain}.{EventName}" },
 *     "prefix": "prod.", "kafkaTiers": [1000, 10000, 60000],
 *     "catalogs": { "orders": "@acme/orders-catalog" }, "wireFormat": "json" }
 *
 * `prefix` and `kafkaTiers` are how the services deploy the topology (the prefix of every queue,
 * exchange and topic; the Kafka consumers' retry tiers): the operator commands read them here so
 * that nobody repeats them by hand.
 *
 * `catalogs` names the catalogs this repository depends on (produced elsewhere, read here): a name
 * of your choosing (kebab-case; it names the pin file and appears in messages) mapped to an
 * installed catalog package or a folder (`./…`, relative to the config file).
 *
 * `wireFormat` is how this repository's own events are written on Kafka (`json` or `confluent`);
 * an event.json's `kafka.wireFormat` overrides it for that event. A dependency catalog's comes from
 * its package (`"evgen": {"wireFormat": …}`), never from here.
 */
import { stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { Ajv } from 'ajv';
import { CatalogError, type CatalogProblem } from '../catalog/catalog-error.js';
import { suggestion } from '../catalog/did-you-mean.js';
import { DEFAULT_EVENT_TYPE_FORMAT, eventTypeFormatProblem } from '../catalog/event-type-format.js';
import { displayPath, readJsonFile } from '../catalog/read-json-file.js';
import { ProblemList } from '../catalog/problem-list.js';
import { DEFAULT_RUNTIME_IMPORT } from '../codegen/runtime-import.js';
import { compareStrings } from '../common/json-value.js';
import { KAFKA_WIRE_FORMATS, type KafkaWireFormat } from '../catalog/model.js';
import {
  CATALOG_NAME_PATTERN,
  type CatalogDependencySpec,
} from '../catalog/catalog-dependencies.js';

export const CONFIG_FILE_NAME = 'evgen.config.json';

export interface EvgenConfig {
  /** Absolute events folder. */
  readonly events: string;
  /** Absolute output folder. */
  readonly out: string;
  /** Targets to run; undefined means all. */
  readonly targets: readonly string[] | undefined;
  readonly runtimeImport: string;
  /** Absolute folder of the user-owned handler stubs (`evgen scaffold`). */
  readonly handlers: string;
  /** Template of default event type strings (`naming.eventType`). */
  readonly eventTypeFormat: string;
  /** The topology prefix the services deploy with (`prefix`); undefined when not set. */
  readonly prefix: string | undefined;
  /** The Kafka consumers' retry tiers in ms, ascending (`kafkaTiers`); undefined = the default. */
  readonly kafkaTiers: readonly number[] | undefined;
  /** The catalogs this repository depends on (`catalogs`), sorted by name; empty when none. */
  readonly catalogs: readonly CatalogDependencySpec[];
  /** The schema registry (`registry`): its URL and subject name strategy; undefined when not set. */
  readonly registry: RegistryConfig | undefined;
  /** How the own events are written on Kafka unless their event.json says (`wireFormat`). */
  readonly wireFormat: KafkaWireFormat;
  /** The config file that was read, if any. */
  readonly file: string | undefined;
}

/** `registry` in evgen.config.json: credentials never live here (they come from the environment). */
export interface RegistryConfig {
  /** Base URL of the registry's Confluent API; EVGEN_REGISTRY_URL and --registry override it. */
  readonly url?: string;
  /**
   * The environment variables holding the credentials (default EVGEN_REGISTRY_USERNAME +
   * EVGEN_REGISTRY_PASSWORD, or EVGEN_REGISTRY_TOKEN): names only, never the secrets.
   */
  readonly auth?:
    | { readonly basic: { readonly usernameEnv: string; readonly passwordEnv: string } }
    | { readonly bearer: { readonly tokenEnv: string } };
  /** PEM file of extra trusted CAs for an https URL, relative to the config file; EVGEN_REGISTRY_CA_FILE overrides it. */
  readonly caFile?: string;
  readonly subjectNameStrategy?:
    'RecordNameStrategy' | 'TopicNameStrategy' | 'TopicRecordNameStrategy';
}

/** Flags a command got; each overrides the config file. */
export interface ConfigFlags {
  readonly config?: string;
  readonly events?: string;
  readonly out?: string;
  readonly handlers?: string;
}

const CONFIG_KEYS = [
  '$schema',
  'events',
  'out',
  'handlers',
  'targets',
  'runtimeImport',
  'naming',
  'prefix',
  'kafkaTiers',
  'catalogs',
  'registry',
  'wireFormat',
];

const EXAMPLE_CONFIG =
  '{"events": "events", "out": "generated", "handlers": "handlers", "targets": ["<target>", …], "runtimeImport": "evgen-runtime", "naming": {"eventType": "{domain}.{EventName}"}, "prefix": "", "kafkaTiers": [1000, 10000, 60000], "catalogs": {"orders": "@acme/orders-catalog"}}';

/** What each key is, said when its value is wrong. */
const KEY_HINTS: Readonly<Record<string, string>> = {
  events: '"events" is the events folder, a path relative to the config file, e.g. "events"',
  out: '"out" is the output folder, a path relative to the config file, e.g. "generated"',
  handlers:
    '"handlers" is the folder of your handler stubs, relative to the config file, e.g. "handlers"',
  targets:
    '"targets" lists target names to run, e.g. ["types", "validators", "envelopes", "index"]',
  runtimeImport:
    '"runtimeImport" is the module generated code imports the runtime from, e.g. "evgen-runtime"',
  naming: '"naming" may hold "eventType", a template such as "{domain}.{EventName}"',
  prefix: '"prefix" is the topology prefix your services deploy with, e.g. "prod."',
  registry:
    '"registry" is {"url": "https://registry.example:8081", "subjectNameStrategy": "RecordNameStrategy" | "TopicNameStrategy" | "TopicRecordNameStrategy", "caFile": "certs/registry-ca.pem", "auth": {"basic": {"usernameEnv": "SR_KEY", "passwordEnv": "SR_SECRET"}} or {"bearer": {"tokenEnv": "SR_TOKEN"}}}; the URL carries no credentials and auth names environment variables, never secrets (default EVGEN_REGISTRY_USERNAME/PASSWORD or EVGEN_REGISTRY_TOKEN)',
  kafkaTiers:
    '"kafkaTiers" lists the Kafka consumers\' retry tiers in ascending milliseconds, e.g. [1000, 10000, 60000]',
  wireFormat: `"wireFormat" is how this repository's events are written on Kafka: one of ${KAFKA_WIRE_FORMATS.join(', ')} (default json; "confluent" frames values with the registry's schema id; an event.json's kafka.wireFormat overrides it)`,
  catalogs:
    '"catalogs" maps a kebab-case name to a catalog package or folder this repository reads, e.g. {"orders": "@acme/orders-catalog"} or {"orders": "./vendor/orders-events"}',
};

/** An environment variable's name (what `registry.auth` holds instead of a secret). */
const ENV_NAME_PATTERN = '^[A-Za-z_][A-Za-z0-9_]*$';

const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    $schema: { type: 'string' },
    events: { type: 'string', minLength: 1 },
    out: { type: 'string', minLength: 1 },
    targets: {
      type: 'array',
      uniqueItems: true,
      items: { type: 'string', pattern: '^[a-z][a-z0-9-]*$' },
    },
    runtimeImport: { type: 'string', pattern: '^[A-Za-z0-9@._/-]+$' },
    handlers: { type: 'string', minLength: 1 },
    naming: {
      type: 'object',
      additionalProperties: false,
      properties: { eventType: { type: 'string', minLength: 1 } },
    },
    prefix: { type: 'string' },
    kafkaTiers: {
      type: 'array',
      minItems: 1,
      items: { type: 'integer', minimum: 1 },
    },
    catalogs: {
      type: 'object',
      propertyNames: { pattern: CATALOG_NAME_PATTERN },
      additionalProperties: { type: 'string', minLength: 1 },
    },
    wireFormat: { enum: [...KAFKA_WIRE_FORMATS] },
    registry: {
      type: 'object',
      additionalProperties: false,
      properties: {
        // No userinfo: a password in evgen.config.json would be committed.
        url: { type: 'string', pattern: '^https?://[^/@]*(/|$)' },
        caFile: { type: 'string', minLength: 1 },
        auth: {
          oneOf: [
            {
              type: 'object',
              additionalProperties: false,
              required: ['basic'],
              properties: {
                basic: {
                  type: 'object',
                  additionalProperties: false,
                  required: ['usernameEnv', 'passwordEnv'],
                  properties: {
                    usernameEnv: { type: 'string', pattern: ENV_NAME_PATTERN },
                    passwordEnv: { type: 'string', pattern: ENV_NAME_PATTERN },
                  },
                },
              },
            },
            {
              type: 'object',
              additionalProperties: false,
              required: ['bearer'],
              properties: {
                bearer: {
                  type: 'object',
                  additionalProperties: false,
                  required: ['tokenEnv'],
                  properties: { tokenEnv: { type: 'string', pattern: ENV_NAME_PATTERN } },
                },
              },
            },
          ],
        },
        subjectNameStrategy: {
          enum: ['RecordNameStrategy', 'TopicNameStrategy', 'TopicRecordNameStrategy'],
        },
      },
    },
  },
} as const;

let validateConfig: ReturnType<Ajv['compile']> | undefined;

/**
 * Reads the config (the `--config` file, or `evgen.config.json` in `cwd` when it exists) and
 * applies flags. Throws CatalogError (printed like catalog problems, exit 2) when it is invalid.
 */
export async function loadConfig(flags: ConfigFlags, cwd = process.cwd()): Promise<EvgenConfig> {
  const explicit = flags.config !== undefined;
  const path = resolve(cwd, flags.config ?? CONFIG_FILE_NAME);
  const problems = new ProblemList();
  let fromFile: {
    events?: string;
    out?: string;
    handlers?: string;
    targets?: string[];
    runtimeImport?: string;
    naming?: { eventType?: string };
    prefix?: string;
    kafkaTiers?: number[];
    catalogs?: Record<string, string>;
    registry?: RegistryConfig;
    wireFormat?: KafkaWireFormat;
  } = {};
  const exists = await stat(path).then(
    (found) => found.isFile(),
    () => false,
  );
  if (!exists && explicit) {
    throw new CatalogError([
      {
        code: 'config-missing',
        file: displayPath(path),
        pointer: '',
        message: 'the config file does not exist',
        hint: 'check the --config path',
      },
    ]);
  }
  if (exists) {
    const read = await readJsonFile(path, problems);
    problems.throwIfAny();
    if (read.ok) {
      validateConfig ??= new Ajv({ allErrors: true }).compile(configSchema);
      if (!validateConfig(read.value)) {
        for (const error of validateConfig.errors ?? [])
          problems.add(configProblem(error, displayPath(path)));
        problems.throwIfAny(); // sorted by pointer, like catalog problems
      }
      fromFile = read.value as typeof fromFile;
      const tiers = fromFile.kafkaTiers ?? [];
      if (tiers.some((tier, i) => i > 0 && tier <= tiers[i - 1]!)) {
        throw new CatalogError([
          {
            code: 'invalid-config',
            file: displayPath(path),
            pointer: '/kafkaTiers',
            message: `${JSON.stringify(tiers)} is not ascending`,
            hint: KEY_HINTS.kafkaTiers!,
          },
        ]);
      }
      const eventType = fromFile.naming?.eventType;
      const formatProblem = eventType === undefined ? undefined : eventTypeFormatProblem(eventType);
      if (formatProblem !== undefined) {
        throw new CatalogError([
          {
            code: 'invalid-config',
            file: displayPath(path),
            pointer: '/naming/eventType',
            message: `${JSON.stringify(eventType)} ${formatProblem}`,
            hint: 'e.g. "{domain}.{EventName}" (order.OrderCreated) or "{domain}.{event-name}" (order.order-created)',
          },
        ]);
      }
    }
  }
  const base = dirname(path);
  return {
    events:
      flags.events !== undefined
        ? resolve(cwd, flags.events)
        : resolve(base, fromFile.events ?? 'events'),
    out:
      flags.out !== undefined
        ? resolve(cwd, flags.out)
        : resolve(base, fromFile.out ?? 'generated'),
    targets: fromFile.targets,
    runtimeImport: fromFile.runtimeImport ?? DEFAULT_RUNTIME_IMPORT,
    handlers:
      flags.handlers !== undefined
        ? resolve(cwd, flags.handlers)
        : resolve(base, fromFile.handlers ?? 'handlers'),
    eventTypeFormat: fromFile.naming?.eventType ?? DEFAULT_EVENT_TYPE_FORMAT,
    prefix: fromFile.prefix,
    kafkaTiers: fromFile.kafkaTiers,
    catalogs: Object.entries(fromFile.catalogs ?? {})
      .sort(([a], [b]) => compareStrings(a, b))
      .map(([name, source]) => ({ name, source, base })),
    registry:
      fromFile.registry === undefined
        ? undefined
        : {
            ...fromFile.registry,
            ...(fromFile.registry.caFile !== undefined
              ? { caFile: resolve(base, fromFile.registry.caFile) }
              : {}),
          },
    wireFormat: fromFile.wireFormat ?? 'json',
    file: exists ? path : undefined,
  };
}

function configProblem(
  error: {
    instancePath: string;
    keyword: string;
    params: Record<string, unknown>;
    message?: string;
  },
  file: string,
): CatalogProblem {
  if (error.keyword === 'additionalProperties') {
    const key = String(error.params.additionalProperty);
    return {
      code: 'invalid-config',
      file,
      pointer: `/${key}`,
      message: `unknown key ${JSON.stringify(key)}`,
      hint: suggestion(
        key,
        CONFIG_KEYS,
        `remove it; allowed keys: ${CONFIG_KEYS.slice(1).join(', ')}`,
      ),
    };
  }
  const key = error.instancePath.split('/')[1] ?? '';
  return {
    code: 'invalid-config',
    file,
    pointer: error.instancePath,
    message: error.message ?? `fails "${error.keyword}"`,
    hint: KEY_HINTS[key] ?? `e.g. ${EXAMPLE_CONFIG}`,
  };
}
