/**
 * Golden test cases in the style of sqlc: `test/golden/<case>/events/` is an input catalog,
 * `test/golden/<case>/expected/` the output committed beside it. One more case, `example`, is the
 * repository's own catalog: `events/` in, the committed `generated/` (every target) as expected
 * output, so the example is pinned without a second copy of it. A case runs GOLDEN_TARGETS unless
 * it holds an `evgen.config.json` whose `targets` say otherwise (the transport cases run every
 * target, to pin what a Kafka-only or RabbitMQ-only catalog does and does not get), and its
 * `wireFormat` is the catalog's Kafka wire format (the `wire-format` case: framed routes).
 * `EVGEN_UPDATE=1 npx vitest run test/golden` rewrites the expected folders from the current
 * generator.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadCatalog } from '../../src/catalog/load-catalog.js';
import type { KafkaWireFormat } from '../../src/catalog/model.js';
import { generate } from '../../src/codegen/generate.js';
import type { GeneratedFile } from '../../src/codegen/target.js';
import { allTargets } from '../../src/codegen/targets/index.js';

export const GOLDEN_DIR = fileURLToPath(new URL('.', import.meta.url));
const REPO_DIR = fileURLToPath(new URL('../../', import.meta.url));

/** The case that is the repository's example catalog and its committed output. */
export const EXAMPLE_CASE = 'example';

/**
 * The targets these goldens pin: payload types, validators, envelopes and the index module.
 * Outbox, inbox and transport targets keep their own tests, so a change there does not ripple here.
 */
export const GOLDEN_TARGETS = ['types', 'validators', 'envelopes', 'index'] as const;

/** Case names (folders with an `events/` folder, plus `example`), sorted. */
export function goldenCases(): string[] {
  return [
    EXAMPLE_CASE,
    ...readdirSync(GOLDEN_DIR, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && existsSync(join(GOLDEN_DIR, entry.name, 'events')))
      .map((entry) => entry.name),
  ].sort();
}

export function caseEventsDir(name: string): string {
  return name === EXAMPLE_CASE ? join(REPO_DIR, 'events') : join(GOLDEN_DIR, name, 'events');
}

export function expectedDir(name: string): string {
  return name === EXAMPLE_CASE ? join(REPO_DIR, 'generated') : join(GOLDEN_DIR, name, 'expected');
}

/** The targets a case runs: every one for the example, else its config's `targets` or GOLDEN_TARGETS. */
export function caseTargets(name: string): readonly string[] | undefined {
  if (name === EXAMPLE_CASE) return undefined;
  const config = join(GOLDEN_DIR, name, 'evgen.config.json');
  if (!existsSync(config)) return GOLDEN_TARGETS;
  return (JSON.parse(readFileSync(config, 'utf8')) as { targets: string[] }).targets;
}

/** The catalog's Kafka wire format a case's config sets (`wireFormat`), as `evgen build` reads it. */
export function caseWireFormat(name: string): KafkaWireFormat | undefined {
  const config = join(GOLDEN_DIR, name, 'evgen.config.json');
  if (name === EXAMPLE_CASE || !existsSync(config)) return undefined;
  return (JSON.parse(readFileSync(config, 'utf8')) as { wireFormat?: KafkaWireFormat }).wireFormat;
}

/** Runs loadCatalog + generate over a case's catalog (every target for the example, as `evgen build` does). */
export async function buildCase(name: string): Promise<GeneratedFile[]> {
  const wireFormat = caseWireFormat(name);
  const catalog = await loadCatalog(
    caseEventsDir(name),
    wireFormat === undefined ? {} : { wireFormat },
  );
  const targets = caseTargets(name);
  return generate(catalog, allTargets, targets === undefined ? {} : { targetNames: [...targets] });
}

/** Every file under `dir`, as output-relative `/`-separated paths, sorted. */
export function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  const walk = (current: string) => {
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      const path = join(current, entry.name);
      if (entry.isDirectory()) walk(path);
      else out.push(relative(dir, path).split(sep).join('/'));
    }
  };
  walk(dir);
  return out.sort();
}

export function readExpected(name: string, path: string): string {
  return readFileSync(join(expectedDir(name), path), 'utf8');
}
