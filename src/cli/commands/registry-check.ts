/**
 * `evgen registry check [--registry URL] [--subject-strategy S]`: for every unreleased version
 * (not in events/evgen.lock.json), the registry's own verdict (`POST /compatibility/subjects/<s>/
 * versions`, judged under the subject's level) printed beside evgen's. A disagreement is printed
 * as one, never hidden; so is a verdict the registry cannot give.
 * Exit 0 both say compatible, 1 either says incompatible or they disagree, 2 bad input or a
 * registry failure.
 */
import type { Command } from 'commander';
import { loadCatalog } from '../../catalog/load-catalog.js';
import { checkCatalog } from '../../compat/check-catalog.js';
import { readReleaseLock } from '../../compat/release-lock.js';
import { registeredSchema, samePayload } from '../../registry/registered-schema.js';
import { subjectName } from '../../runtime/registry/subject-name.js';
import { SchemaRegistryError } from '../../runtime/registry/schema-registry-error.js';
import { addFolderOptions, reportingProblems } from '../command-support.js';
import { loadConfig } from '../config.js';
import { EXIT_FINDINGS, EXIT_OK } from '../exit-codes.js';
import {
  connectRegistry,
  dialectHint,
  isDialectFailure,
  readEventJson,
  registryOptions,
  reportingRegistry,
  subjectStrategy,
  type RegistryCommandOptions,
} from '../registry-connection.js';

export function registerRegistryCheck(registry: Command): void {
  addFolderOptions(
    registryOptions(
      registry
        .command('check')
        .description(
          "the registry's compatibility verdict on every unreleased version, beside evgen's",
        ),
    ),
  ).action(async (options: RegistryCommandOptions) => {
    process.exitCode = await runRegistryCheck(options);
  });
}

/** The registry's verdict on one version. */
type RegistryVerdict =
  | 'compatible'
  | 'incompatible'
  | 'already registered'
  | 'no subject yet'
  | `cannot judge: ${string}`;

export function runRegistryCheck(
  options: RegistryCommandOptions,
  cwd = process.cwd(),
): Promise<number> {
  return reportingProblems(async () => {
    const config = await loadConfig({ events: options.events, config: options.config }, cwd);
    const catalog = await loadCatalog(config.events, { eventTypeFormat: config.eventTypeFormat });
    const lock = await readReleaseLock(config.events);
    const strategy = subjectStrategy(options, config);
    const client = connectRegistry(options.registry, config);
    const report = checkCatalog(catalog, lock !== undefined ? { lock } : {});
    const out = (line: string) => process.stdout.write(`${line}\n`);
    let failed = false;
    let judged = 0;
    for (const event of catalog.events) {
      const released = lock?.events.get(event.dir);
      const unreleased = event.versions.filter((v) => !(released?.has(v.version) ?? false));
      if (unreleased.length === 0) continue;
      const subject = subjectName(strategy, {
        eventType: event.eventType,
        topic: event.kafka?.topic,
      });
      if (subject === undefined) {
        out(
          `${event.eventType}: skipped (no Kafka topic, and ${strategy} names subjects by topic)`,
        );
        continue;
      }
      const eventJson = await readEventJson(catalog.root, event.dir);
      const held = await reportingRegistry(() => client.versions(subject), subject);
      for (const version of unreleased) {
        judged++;
        const violations = report.violations.filter(
          (v) => v.eventType === event.eventType && v.version === version.version,
        );
        const evgen = violations.length === 0 ? 'compatible' : 'incompatible';
        let registry: RegistryVerdict;
        const atPosition = held?.[version.version - 1];
        const registered =
          atPosition === undefined
            ? undefined
            : await reportingRegistry(() => client.version(subject, atPosition), subject);
        if (held === undefined) {
          // Not asked: Apicurio answers "compatible" for an unknown subject, Confluent 404.
          registry = 'no subject yet';
        } else if (registered !== undefined && samePayload(registered.schema, version.bundled)) {
          registry = 'already registered';
        } else {
          const text = registeredSchema(event, version, eventJson).text;
          try {
            registry = (await client.testCompatibility(subject, text))
              ? 'compatible'
              : 'incompatible';
          } catch (error) {
            if (!(error instanceof SchemaRegistryError)) throw error;
            if (!isDialectFailure(error))
              await reportingRegistry(() => Promise.reject(error), subject);
            registry = `cannot judge: ${error.message} (this registry cannot check 2019-09/2020-12 schemas under a level other than NONE; evgen's verdict stands)`;
          }
        }
        const unjudged = registry.startsWith('cannot judge');
        const agree =
          registry === evgen ||
          unjudged ||
          (evgen === 'compatible' &&
            (registry === 'already registered' || registry === 'no subject yet'));
        if (evgen === 'incompatible' || registry === 'incompatible' || !agree) failed = true;
        const verdicts = `evgen ${evgen}${violations.length > 0 ? ` (${violations.length} violations: ${violations.map((v) => v.code).join(', ')})` : ''}, registry ${registry}`;
        out(
          `${unjudged ? 'UNJUDGED ' : agree ? '' : 'DISAGREE '}${event.eventType} v${version.version} (subject ${subject}, mode ${event.compatibility}): ${verdicts}`,
        );
        if (unjudged) out(`  to get the registry's verdict: ${dialectHint(subject)}`);
      }
    }
    out(
      judged === 0
        ? 'no unreleased versions to check'
        : failed
          ? 'registry check failed: see the lines above'
          : `registry check passed: ${judged} unreleased versions`,
    );
    return failed ? EXIT_FINDINGS : EXIT_OK;
  });
}
