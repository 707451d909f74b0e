/**
 * How the `registry` commands reach the schema registry. The URL comes from `--registry`, else
 * EVGEN_REGISTRY_URL, else `registry.url` in evgen.config.json. Secrets come from the environment
 * only, never from a file in the repository (evgen.config.json may name the variables:
 * `registry.auth`, and give a CA file: `registry.caFile`):
 *
 *   EVGEN_REGISTRY_USERNAME + EVGEN_REGISTRY_PASSWORD   basic auth (Confluent Cloud: API key + secret)
 *   EVGEN_REGISTRY_TOKEN                                bearer token
 *   EVGEN_REGISTRY_CA_FILE                              PEM file of extra trusted CAs (https)
 *   EVGEN_REGISTRY_TIMEOUT_MS                           per request (default 10000)
 *   EVGEN_REGISTRY_RETRIES                              retries of unanswered requests (default 2)
 *
 * A URL given on the command line or in EVGEN_REGISTRY_URL may carry `user:password@` (basic
 * auth); the client takes it out of the URL, and no message shows a secret.
 * Every registry failure becomes one problem on stderr and exit 2, never a stack trace.
 */
import { readFileSync } from 'node:fs';
import { Option, type Command } from 'commander';
import type { CatalogProblem } from '../catalog/catalog-error.js';
import {
  createSchemaRegistryClient,
  type SchemaRegistryAuth,
  type SchemaRegistryClient,
} from '../runtime/registry/schema-registry-client.js';
import { SchemaRegistryError } from '../runtime/registry/schema-registry-error.js';
import {
  DEFAULT_SUBJECT_NAME_STRATEGY,
  SUBJECT_NAME_STRATEGIES,
  type SubjectNameStrategy,
} from '../runtime/registry/subject-name.js';
import { refuse } from './command-support.js';
import type { EvgenConfig } from './config.js';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

const env = (name: string): string | undefined => {
  const value = process.env[name];
  return value === undefined || value === '' ? undefined : value;
};

function positiveInteger(name: string, fallback: number, allowZero = false): number {
  const text = env(name);
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < (allowZero ? 0 : 1))
    throw refuse({
      code: 'registry-settings',
      file: name,
      message: `${name}=${JSON.stringify(text)} is not a ${allowZero ? 'non-negative' : 'positive'} integer`,
      hint: `unset it or give a whole number, e.g. ${name}=${fallback}`,
    });
  return value;
}

/** The credentials from the environment variables `registry.auth` names (default EVGEN_REGISTRY_*). */
function auth(config: EvgenConfig): SchemaRegistryAuth | undefined {
  const named = config.registry?.auth;
  if (named !== undefined && 'bearer' in named) {
    const token = env(named.bearer.tokenEnv);
    if (token === undefined)
      throw refuse({
        code: 'registry-settings',
        file: named.bearer.tokenEnv,
        message: `"registry.auth" in evgen.config.json names ${named.bearer.tokenEnv} for the bearer token, and it is not set`,
        hint: `set ${named.bearer.tokenEnv} to the registry's token`,
      });
    return { token };
  }
  const usernameEnv = named?.basic.usernameEnv ?? 'EVGEN_REGISTRY_USERNAME';
  const passwordEnv = named?.basic.passwordEnv ?? 'EVGEN_REGISTRY_PASSWORD';
  const username = env(usernameEnv);
  const password = env(passwordEnv);
  const token = named === undefined ? env('EVGEN_REGISTRY_TOKEN') : undefined;
  if (token !== undefined && (username !== undefined || password !== undefined))
    throw refuse({
      code: 'registry-settings',
      file: 'EVGEN_REGISTRY_TOKEN',
      message: 'both a bearer token and basic-auth credentials are set',
      hint: 'set either EVGEN_REGISTRY_TOKEN or EVGEN_REGISTRY_USERNAME + EVGEN_REGISTRY_PASSWORD',
    });
  if (token !== undefined) return { token };
  if (username === undefined && password === undefined) {
    if (named === undefined) return undefined;
    throw refuse({
      code: 'registry-settings',
      file: usernameEnv,
      message: `"registry.auth" in evgen.config.json names ${usernameEnv} and ${passwordEnv} for basic auth, and they are not set`,
      hint: `set ${usernameEnv} and ${passwordEnv} to the registry's credentials (Confluent Cloud: API key and secret)`,
    });
  }
  if (username === undefined || password === undefined)
    throw refuse({
      code: 'registry-settings',
      file: username === undefined ? usernameEnv : passwordEnv,
      message: `basic auth needs both ${usernameEnv} and ${passwordEnv}`,
      hint: 'set the missing one',
    });
  return { username, password };
}

/** The registry client for a command run; refuses (exit 2) on missing or bad settings. */
export function connectRegistry(
  flag: string | undefined,
  config: EvgenConfig,
): SchemaRegistryClient {
  const url = flag ?? env('EVGEN_REGISTRY_URL') ?? config.registry?.url;
  if (url === undefined)
    throw refuse({
      code: 'registry-settings',
      file: '--registry',
      message: 'no schema registry URL',
      hint: 'pass --registry <url>, set EVGEN_REGISTRY_URL, or "registry": {"url": …} in evgen.config.json',
    });
  const caFromEnv = env('EVGEN_REGISTRY_CA_FILE');
  const caFile = caFromEnv ?? config.registry?.caFile;
  let ca: Buffer | undefined;
  if (caFile !== undefined) {
    const setting =
      caFromEnv !== undefined ? 'EVGEN_REGISTRY_CA_FILE' : '"registry.caFile" in evgen.config.json';
    try {
      ca = readFileSync(caFile);
    } catch (error) {
      throw refuse({
        code: 'registry-settings',
        file: caFile,
        message: `cannot read ${setting} (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
        hint: 'give the path of a PEM file with the CA certificates that signed the registry',
      });
    }
    if (!ca.toString('latin1').includes('-----BEGIN CERTIFICATE-----'))
      throw refuse({
        code: 'registry-settings',
        file: caFile,
        message: `${setting} holds no PEM certificate (no -----BEGIN CERTIFICATE----- line)`,
        hint: 'give the path of a PEM file with the CA certificates that signed the registry',
      });
  }
  const authentication = auth(config);
  try {
    return createSchemaRegistryClient({
      url,
      ...(authentication !== undefined ? { auth: authentication } : {}),
      ...(ca !== undefined ? { ca } : {}),
      timeoutMs: positiveInteger('EVGEN_REGISTRY_TIMEOUT_MS', 10_000),
      retries: positiveInteger('EVGEN_REGISTRY_RETRIES', 2, true),
    });
  } catch (error) {
    if (error instanceof SchemaRegistryError) throw registryProblem(error);
    throw error;
  }
}

const HINTS: Readonly<Record<SchemaRegistryError['kind'], string>> = {
  unreachable:
    'check the URL (--registry, EVGEN_REGISTRY_URL), that the registry runs, and for https the CA that signed it (EVGEN_REGISTRY_CA_FILE or "registry.caFile")',
  unauthorized:
    'set EVGEN_REGISTRY_USERNAME + EVGEN_REGISTRY_PASSWORD (basic) or EVGEN_REGISTRY_TOKEN (bearer), or the variables "registry.auth" names, to credentials the registry accepts; 403: these credentials may not do this (a read-only key pushing?)',
  'not-found':
    'check the URL: it must be the base of the Confluent API (Apicurio: …/apis/ccompat/v7)',
  incompatible:
    "the registry's compatibility level refused the schema: run evgen registry check to compare its verdict with evgen's",
  invalid: 'the registry refused the schema as invalid; the message above says why',
  server: 'the registry failed; the message above is its answer',
};

/**
 * Apicurio 3.0.9 cannot check JSON Schema 2019-09/2020-12 under a level other than NONE: both the
 * check and the registration answer 500 "could not determine version" (draft-07 works).
 */
export function isDialectFailure(error: SchemaRegistryError): boolean {
  return error.kind === 'server' && error.message.includes('could not determine version');
}

/** What to do when the registry cannot check a 2019-09/2020-12 schema (see isDialectFailure). */
export function dialectHint(subject: string | undefined): string {
  const which = subject ?? '<subject>';
  return (
    `write the event's schemas in draft-07 (this registry checks draft-04/06/07), or let the registry enforce nothing for ${which}: ` +
    `set its level to NONE (PUT <registry>/config/${which} with {"compatibility":"NONE"}) and run evgen registry push --no-levels; evgen check still judges every version`
  );
}

/** A registry failure as one problem (exit 2). */
export function registryProblem(
  error: SchemaRegistryError,
  subject?: string,
): ReturnType<typeof refuse> {
  const problem: Omit<CatalogProblem, 'pointer'> = isDialectFailure(error)
    ? {
        code: 'registry-dialect',
        file: subject ?? error.message,
        message: `${error.message}: this registry cannot check JSON Schema 2019-09/2020-12 schemas under a compatibility level other than NONE (Apicurio 3.0.9 does this)`,
        hint: dialectHint(subject),
      }
    : {
        code: `registry-${error.kind}`,
        file: subject ?? 'registry',
        message: error.message,
        hint: HINTS[error.kind],
      };
  return refuse(problem);
}

/** Runs `body`; a SchemaRegistryError becomes one problem (exit 2). */
export async function reportingRegistry<T>(body: () => Promise<T>, subject?: string): Promise<T> {
  try {
    return await body();
  } catch (error) {
    if (error instanceof SchemaRegistryError) throw registryProblem(error, subject);
    throw error;
  }
}

export interface RegistryCommandOptions {
  readonly events?: string;
  readonly config?: string;
  readonly registry?: string;
  readonly subjectStrategy?: SubjectNameStrategy;
}

/** `--registry` and `--subject-strategy`, worded the same in every subcommand. */
export function registryOptions(command: Command): Command {
  return command
    .option(
      '--registry <url>',
      'base URL of the Confluent API (default: EVGEN_REGISTRY_URL, or "registry.url" in evgen.config.json)',
    )
    .addOption(
      new Option(
        '--subject-strategy <strategy>',
        `subject name strategy (default: "registry.subjectNameStrategy" in evgen.config.json, else ${DEFAULT_SUBJECT_NAME_STRATEGY})`,
      ).choices(SUBJECT_NAME_STRATEGIES),
    );
}

export function subjectStrategy(
  options: RegistryCommandOptions,
  config: EvgenConfig,
): SubjectNameStrategy {
  return (
    options.subjectStrategy ?? config.registry?.subjectNameStrategy ?? DEFAULT_SUBJECT_NAME_STRATEGY
  );
}

/** An event's `event.json` as written (the registry annotation carries it verbatim). */
export async function readEventJson(
  catalogRoot: string,
  eventDir: string,
): Promise<Record<string, unknown>> {
  const text = await readFile(join(catalogRoot, eventDir, 'event.json'), 'utf8');
  return JSON.parse(text) as Record<string, unknown>;
}
