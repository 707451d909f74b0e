/**
 * `evgen registry push [--registry URL] [--subject-strategy S] [--dry-run] [--no-levels]`:
 * registers every version of every event under its subject, in version order. Idempotent: a
 * version already registered with the same schema is left alone (same id). Each subject's
 * compatibility level is set from the event's mode (unless --no-levels). Refuses before writing
 * anything when the registry holds a different schema for a version (see push-plan.ts).
 * Exit 0 pushed (or planned), 2 refused, bad input or a registry failure.
 */
import type { Command } from 'commander';
import { CatalogError } from '../../catalog/catalog-error.js';
import { loadCatalog } from '../../catalog/load-catalog.js';
import { displayPath } from '../../catalog/read-json-file.js';
import { readReleaseLock } from '../../compat/release-lock.js';
import {
  describePlan,
  isRefusal,
  planSubject,
  wantedSubjects,
  type PushPlan,
  type SubjectPlan,
} from '../../registry/push-plan.js';
import type {
  SchemaRegistryClient,
  SubjectVersion,
} from '../../runtime/registry/schema-registry-client.js';
import { addFolderOptions, reportingProblems } from '../command-support.js';
import { loadConfig } from '../config.js';
import { EXIT_OK } from '../exit-codes.js';
import {
  connectRegistry,
  readEventJson,
  registryOptions,
  reportingRegistry,
  subjectStrategy,
  type RegistryCommandOptions,
} from '../registry-connection.js';

export interface RegistryPushOptions extends RegistryCommandOptions {
  readonly dryRun?: boolean;
  /** `--no-levels`: leave every subject's compatibility level as it is. */
  readonly levels?: boolean;
}

export function registerRegistryPush(registry: Command): void {
  addFolderOptions(
    registryOptions(
      registry
        .command('push')
        .description(
          'register every event version under its subject, in version order (idempotent)',
        )
        .option('--dry-run', 'print the plan; write nothing')
        .option('--no-levels', "leave the subjects' compatibility levels as they are"),
    ),
  ).action(async (options: RegistryPushOptions) => {
    process.exitCode = await runRegistryPush(options);
  });
}

/** What the registry holds for `subject`: every version with its schema, or undefined. */
export async function registeredVersions(
  client: SchemaRegistryClient,
  subject: string,
): Promise<SubjectVersion[] | undefined> {
  const versions = await client.versions(subject);
  if (versions === undefined) return undefined;
  const held: SubjectVersion[] = [];
  for (const version of versions) {
    const found = await client.version(subject, version);
    if (found !== undefined) held.push(found);
  }
  return held;
}

export function runRegistryPush(
  options: RegistryPushOptions,
  cwd = process.cwd(),
): Promise<number> {
  return reportingProblems(async () => {
    const config = await loadConfig({ events: options.events, config: options.config }, cwd);
    const catalog = await loadCatalog(config.events, { eventTypeFormat: config.eventTypeFormat });
    const lock = await readReleaseLock(config.events);
    const eventJsons = new Map<string, Record<string, unknown>>();
    for (const event of catalog.events) {
      eventJsons.set(event.dir, await readEventJson(catalog.root, event.dir));
    }
    const strategy = subjectStrategy(options, config);
    const client = connectRegistry(options.registry, config);
    const wanted = wantedSubjects(catalog, eventJsons, strategy, lock?.events);
    const plans: SubjectPlan[] = [];
    const refusals = [...wanted.refusals];
    for (const subject of wanted.wanted) {
      const held = await reportingRegistry(
        () => registeredVersions(client, subject.subject),
        subject.subject,
      );
      const plan = planSubject(subject, held);
      if (isRefusal(plan)) refusals.push(plan);
      else plans.push(plan);
    }
    if (refusals.length > 0) {
      throw new CatalogError(
        refusals.map((refusal) => ({
          code: refusal.code,
          file: displayPath(config.events),
          pointer: '',
          message: `${refusal.message}; nothing was written`,
          hint: refusal.hint,
        })),
      );
    }
    const plan: PushPlan = { subjects: plans, refusals: [], skipped: wanted.skipped };
    const out = (line: string) => process.stdout.write(`${line}\n`);
    if (options.dryRun === true) {
      out(`plan for ${client.url} (dry run, nothing written):`);
      for (const line of describePlan(plan)) out(line);
      return EXIT_OK;
    }
    for (const line of describePlan(plan)) out(line);
    let registered = 0;
    for (const subject of plans) {
      await reportingRegistry(async () => {
        if (options.levels !== false) await client.setLevel(subject.subject, subject.level);
        for (const version of subject.register) {
          const id = await client.register(subject.subject, version.text);
          out(`registered ${subject.subject} v${version.version} (id ${id})`);
          registered++;
        }
      }, subject.subject);
    }
    out(`pushed ${plans.length} subjects to ${client.url}: ${registered} versions registered`);
    return EXIT_OK;
  });
}
