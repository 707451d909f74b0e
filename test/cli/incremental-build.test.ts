/**
 * Incremental `evgen build`: after each of a sequence of random catalog edits, a build through
 * the cache writes exactly the bytes a cold build (`--no-cache`) writes; a repeated build
 * recognises unchanged inputs without generating; a damaged cache (truncated, edited, swapped
 * entries, a manifest that no longer matches the output folder) never changes a byte.
 */
import {
  existsSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runBuild } from '../../src/cli/commands/build.js';
import {
  seededRandom,
  syntheticSchema,
  writeSyntheticCatalog,
} from '../support/synthetic-catalog.js';
import { captureOutput } from './capture-output.js';

let dir: string;
let events: string;
const incremental = () => join(dir, 'incremental');
const cold = () => join(dir, 'cold');
const cacheDir = () => join(dir, 'cache');

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'evgen-incremental-'));
  events = join(dir, 'events');
  writeSyntheticCatalog(events, { events: 2 });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Every file under `root` as path → content. */
function tree(root: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (sub: string) => {
    for (const entry of readdirSync(join(root, sub), { withFileTypes: true })) {
      const path = sub === '' ? entry.name : `${sub}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else files[path] = readFileSync(join(root, path), 'utf8');
    }
  };
  if (existsSync(root)) walk('');
  return files;
}

async function build(options: Parameters<typeof runBuild>[0]): Promise<string> {
  const output = captureOutput();
  try {
    expect(await runBuild({ events, ...options })).toBe(0);
    return output.stdout();
  } finally {
    output.restore();
  }
}

async function expectSameAsCold(): Promise<void> {
  const stdout = await build({ out: incremental(), cacheDir: cacheDir() });
  await build({ out: cold(), cache: false });
  expect(tree(incremental())).toEqual(tree(cold()));
  expect(stdout).not.toContain('inputs unchanged');
}

function schemaFiles(): string[] {
  const found: string[] = [];
  const walk = (sub: string) => {
    for (const entry of readdirSync(join(events, sub), { withFileTypes: true })) {
      const path = sub === '' ? entry.name : `${sub}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (/v\d+\.schema\.json$/.test(entry.name)) found.push(path);
    }
  };
  walk('');
  return found.sort();
}

const random = seededRandom(14);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

/** Random edits of the kinds a team makes; each returns what it did (for failure messages). */
const EDITS: (() => string)[] = [
  () => {
    const file = pick(schemaFiles());
    const schema = JSON.parse(readFileSync(join(events, file), 'utf8')) as Record<string, unknown>;
    schema.description = `edited ${Math.floor(random() * 1e6)}`;
    writeFileSync(join(events, file), JSON.stringify(schema, null, 2));
    return `description of ${file}`;
  },
  () => {
    const file = pick(schemaFiles());
    const schema = JSON.parse(readFileSync(join(events, file), 'utf8')) as {
      properties: Record<string, unknown>;
    };
    schema.properties[`added${Math.floor(random() * 1000)}`] = {
      type: 'string',
      enum: ['x', 'y'],
    };
    writeFileSync(join(events, file), JSON.stringify(schema, null, 2));
    return `property added to ${file}`;
  },
  () => {
    const file = pick(schemaFiles()).replace(/v\d+\.schema\.json$/, 'event.json');
    const meta = JSON.parse(readFileSync(join(events, file), 'utf8')) as Record<string, unknown>;
    meta.description = `edited event ${Math.floor(random() * 1e6)}`;
    writeFileSync(join(events, file), JSON.stringify(meta, null, 2));
    return `description in ${file}`;
  },
  () => {
    const file = pick(schemaFiles());
    const folder = file.slice(0, file.lastIndexOf('/'));
    const versions = schemaFiles().filter((path) => path.startsWith(`${folder}/`)).length;
    writeFileSync(
      join(events, folder, `v${versions + 1}.schema.json`),
      JSON.stringify(syntheticSchema(Math.floor(random() * 50), versions + 1), null, 2),
    );
    return `version ${versions + 1} of ${folder}`;
  },
  () => {
    // Consumers, topology and catalog.ts read metadata only (readsSchemas: false).
    const file = join(events, '_consumers', 'synthetic-service.json');
    const consumer = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    consumer.description = `edited consumer ${Math.floor(random() * 1e6)}`;
    writeFileSync(file, JSON.stringify(consumer, null, 2));
    return 'consumer description';
  },
  () => {
    // A shared schema: every event that references it changes.
    const file = join(events, '_common', 'money.schema.json');
    const schema = JSON.parse(readFileSync(file, 'utf8')) as {
      properties: Record<string, unknown>;
    };
    schema.properties[`note${Math.floor(random() * 1000)}`] = { type: 'string', maxLength: 20 };
    writeFileSync(file, JSON.stringify(schema, null, 2));
    return 'shared money schema';
  },
];

it('builds through the cache exactly what a cold build writes, edit after edit', async () => {
  await expectSameAsCold();
  const repeated = await build({ out: incremental(), cacheDir: cacheDir() });
  expect(repeated).toContain('inputs unchanged');
  const checked = await build({ out: incremental(), cacheDir: cacheDir(), check: true });
  expect(checked).toContain('is up to date');
  for (let step = 0; step < EDITS.length; step++) {
    const edit = EDITS[step]!();
    await expectSameAsCold().catch((error: unknown) => {
      throw new Error(`after editing ${edit}: ${String(error)}`);
    });
  }
  // One more random edit of a random kind.
  pick(EDITS)();
  await expectSameAsCold();
}, 600_000);

it('a damaged cache or a hand-edited output folder never changes a byte', async () => {
  await build({ out: incremental(), cacheDir: cacheDir() });
  const expected = tree(cold());
  expect(tree(incremental())).toEqual(expected);

  // A generated file edited by hand: the manifest no longer matches the folder.
  const victim = Object.keys(expected).find((path) => path.endsWith('envelope.ts'))!;
  writeFileSync(
    join(incremental(), victim),
    '// Code generated by evgen from test. DO NOT EDIT.\nedited by hand\n',
  );
  expect(await build({ out: incremental(), cacheDir: cacheDir() })).not.toContain(
    'inputs unchanged',
  );
  expect(tree(incremental())).toEqual(expected);

  // Damage every kind of entry: truncated, content edited (digest kept), swapped between keys.
  const entries: string[] = [];
  const walk = (sub: string) => {
    for (const entry of readdirSync(join(cacheDir(), sub), { withFileTypes: true })) {
      const path = join(sub, entry.name);
      if (entry.isDirectory()) walk(path);
      else entries.push(join(cacheDir(), path));
    }
  };
  walk('');
  expect(entries.length).toBeGreaterThan(4);
  const contents = entries.map((file) => readFileSync(file, 'utf8'));
  entries.forEach((file, index) => {
    const content = contents[index]!;
    if (index % 3 === 0) writeFileSync(file, content.slice(0, content.length / 2));
    else if (index % 3 === 1) writeFileSync(file, content.replace(/export/g, 'exprot'));
    else writeFileSync(file, contents[(index + 1) % contents.length]!);
  });
  rmSync(incremental(), { recursive: true });
  await build({ out: incremental(), cacheDir: cacheDir() });
  expect(tree(incremental())).toEqual(expected);

  // Deleting the cache is always safe.
  rmSync(cacheDir(), { recursive: true });
  rmSync(incremental(), { recursive: true });
  await build({ out: incremental(), cacheDir: cacheDir() });
  expect(tree(incremental())).toEqual(expected);
}, 600_000);

it('a schema that does not compile is reported on a warm cache too (only successes are remembered)', async () => {
  await build({ out: incremental(), cacheDir: cacheDir() });
  const file = join(events, schemaFiles()[0]!);
  const original = readFileSync(file, 'utf8');
  const schema = JSON.parse(original) as { properties: Record<string, unknown> };
  schema.properties['broken'] = { type: 'string', pattern: '([' };
  writeFileSync(file, JSON.stringify(schema, null, 2));
  const output = captureOutput();
  try {
    for (let run = 0; run < 2; run++)
      expect(await runBuild({ events, out: incremental(), cacheDir: cacheDir() })).toBe(2);
    const [first, second] = output.stderr().split('nothing was written\n');
    expect(first).toContain('invalid-schema');
    expect(second).toBe(first);
  } finally {
    output.restore();
    writeFileSync(file, original);
  }
  await build({ out: incremental(), cacheDir: cacheDir() });
  expect(tree(incremental())).toEqual(tree(cold()));
}, 600_000);

it('a remembered schema load is not reused when the aggregateId or a shared file changed outside it', async () => {
  await build({ out: incremental(), cacheDir: cacheDir() });
  /** Exit code and stderr of a build through the cache and of a cold one: they must agree. */
  const bothWays = async () => {
    const results: { code: number; stderr: string }[] = [];
    for (const options of [{ cacheDir: cacheDir() }, { cache: false }]) {
      const output = captureOutput();
      try {
        const code = await runBuild({ events, out: incremental(), ...options });
        results.push({ code, stderr: output.stderr() });
      } finally {
        output.restore();
      }
    }
    expect(results[0]).toEqual(results[1]);
    return results[0]!;
  };

  // The schemas are unchanged, but they no longer declare the event's aggregateId.
  const eventJson = join(events, schemaFiles()[0]!.replace(/v\d+\.schema\.json$/, 'event.json'));
  const meta = readFileSync(eventJson, 'utf8');
  writeFileSync(eventJson, meta.replace('"aggregateId": "id"', '"aggregateId": "noSuchId"'));
  try {
    expect((await bothWays()).stderr).toContain('aggregate-id-missing');
  } finally {
    writeFileSync(eventJson, meta);
  }

  // A shared file keeps its bytes but becomes a link out of the events folder.
  const money = join(events, '_common', 'money.schema.json');
  const outside = join(dir, 'money-outside.schema.json');
  writeFileSync(outside, readFileSync(money));
  renameSync(money, `${money}.moved`);
  symlinkSync(outside, money);
  try {
    expect((await bothWays()).stderr).toContain('ref-escapes-catalog');
  } finally {
    rmSync(money);
    renameSync(`${money}.moved`, money);
  }

  await build({ out: incremental(), cacheDir: cacheDir() });
  await build({ out: cold(), cache: false });
  expect(tree(incremental())).toEqual(tree(cold()));
}, 600_000);
