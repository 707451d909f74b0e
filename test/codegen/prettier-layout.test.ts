/**
 * Files a target marks `laidOut` skip prettier when `layOutAsPrettier` accepts them; these tests
 * hold that to prettier itself: wherever it accepts a file, its result equals prettier's output
 * byte for byte. Catalogs: the repository's example, every golden case, a synthetic catalog, and
 * random catalogs whose names, descriptions and runtime imports put lines on both sides of the
 * print width.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadCatalog } from '../../src/catalog/load-catalog.js';
import type { Catalog } from '../../src/catalog/model.js';
import { DEFAULT_RUNTIME_IMPORT } from '../../src/codegen/generate.js';
import { formatTypeScript } from '../../src/codegen/render/format.js';
import { generatedHeader } from '../../src/codegen/render/header.js';
import { layOutAsPrettier } from '../../src/codegen/render/prettier-layout.js';
import { allTargets } from '../../src/codegen/targets/index.js';
import { caseEventsDir, goldenCases } from '../golden/golden-support.js';
import {
  minimalSchema,
  seededRandom,
  writeSyntheticCatalog,
} from '../support/synthetic-catalog.js';

const temporary: string[] = [];
afterAll(() => {
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

function temporaryDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'evgen-prettier-layout-'));
  temporary.push(dir);
  return dir;
}

/** The targets whose files are marked `laidOut`. */
const LAID_OUT_TARGETS = ['envelopes', 'outbox', 'validators'];

interface Verdict {
  readonly accepted: string[];
  readonly refused: string[];
}

/** Checks every laid-out file of every target against prettier; returns which were accepted. */
async function compareWithPrettier(catalog: Catalog, runtimeImport: string): Promise<Verdict> {
  const verdict: Verdict = { accepted: [], refused: [] };
  for (const target of allTargets.filter((target) => LAID_OUT_TARGETS.includes(target.name))) {
    for (const file of await target.generate({ catalog, runtimeImport })) {
      if (file.laidOut !== true) continue;
      const content = `${generatedHeader(file.sources)}\n${file.body}`;
      const laidOut = layOutAsPrettier(content);
      if (laidOut === undefined) {
        verdict.refused.push(file.path);
        continue;
      }
      verdict.accepted.push(file.path);
      expect(laidOut, `${file.path} (runtime import ${runtimeImport})`).toBe(
        await formatTypeScript(content),
      );
    }
  }
  return verdict;
}

const RUNTIME_IMPORTS = [
  DEFAULT_RUNTIME_IMPORT,
  'rt',
  '@company/platform-events-runtime/with/a/rather/long/subpath/to/the/module/index.js',
];

describe('laid-out files equal prettier output', () => {
  it('on the example catalog, where most laid-out files skip prettier', async () => {
    const catalog = await loadCatalog(caseEventsDir('example'));
    const verdict = await compareWithPrettier(catalog, DEFAULT_RUNTIME_IMPORT);
    // OrderPaid's descriptor line is 102 columns, where prettier may break after `=`: refused.
    expect(verdict.refused).toEqual(['order/order-paid/envelope.ts']);
    // envelope.ts, outbox.ts and validators.d.ts of each of the example's events.
    expect(verdict.accepted.length).toBe(catalog.events.length * 3 - 1);
    for (const runtimeImport of RUNTIME_IMPORTS.slice(1))
      await compareWithPrettier(catalog, runtimeImport);
    // No other target marks files laid out, so the tests here cover every such file.
    for (const target of allTargets) {
      const files = await target.generate({ catalog, runtimeImport: DEFAULT_RUNTIME_IMPORT });
      if (files.some((file) => file.laidOut === true))
        expect(LAID_OUT_TARGETS).toContain(target.name);
    }
  });

  it('on every golden case', async () => {
    for (const name of goldenCases()) {
      const catalog = await loadCatalog(caseEventsDir(name));
      for (const runtimeImport of RUNTIME_IMPORTS)
        await compareWithPrettier(catalog, runtimeImport);
    }
  });

  it('on a synthetic catalog', async () => {
    const dir = temporaryDir();
    writeSyntheticCatalog(dir, { events: 30, minimal: true });
    const verdict = await compareWithPrettier(await loadCatalog(dir), DEFAULT_RUNTIME_IMPORT);
    expect(verdict.accepted.length).toBe(30 * 3);
  });

  it('on random catalogs with names of every length', async () => {
    const random = seededRandom(7);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const letters = (length: number, first = 'abcdefghijklmnopqrstuvwxyz'): string => {
      let text = pick(first.split(''));
      while (text.length < length) text += pick('abcdefghijklmnopqrstuvwxyz0123456789'.split(''));
      return text;
    };
    const descriptions = [
      'Plain.',
      "It's quoted 'twice' and \"once\".",
      'Back\\slash, `code` and */ comment ends.',
      'Ünïcödé — 注文が作成されました。',
      ' padded ',
      'x'.repeat(150),
    ];
    const accepted = { envelope: 0, outbox: 0, validators: 0 };
    const refused = { envelope: 0, outbox: 0, validators: 0 };
    for (let round = 0; round < 4; round++) {
      const dir = temporaryDir();
      for (let index = 0; index < 40; index++) {
        const domain = letters(1 + Math.floor(random() * 20));
        const name = letters(1 + Math.floor(random() * 60), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ');
        const eventDir = join(dir, domain, name);
        mkdirSync(eventDir, { recursive: true });
        const aggregateId = letters(1 + Math.floor(random() * 40));
        const event = {
          description: pick(descriptions),
          aggregate: letters(1 + Math.floor(random() * 30), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'),
          aggregateId,
          kafka: { topic: letters(1 + Math.floor(random() * 80)) },
          rabbitmq: {
            exchange: domain,
            routingKey: `${domain}.${letters(1 + Math.floor(random() * 60))}`,
          },
        };
        writeFileSync(join(eventDir, 'event.json'), JSON.stringify(event));
        const versions = 1 + Math.floor(random() * 4);
        for (let version = 1; version <= versions; version++)
          writeFileSync(
            join(eventDir, `v${version}.schema.json`),
            JSON.stringify({
              ...minimalSchema(index, version),
              properties: { [aggregateId]: { type: 'string' } },
              required: [aggregateId],
            }),
          );
      }
      const catalog = await loadCatalog(dir);
      const verdict = await compareWithPrettier(catalog, pick(RUNTIME_IMPORTS));
      const kind = (path: string) =>
        path.endsWith('envelope.ts')
          ? 'envelope'
          : path.endsWith('outbox.ts')
            ? 'outbox'
            : 'validators';
      for (const path of verdict.accepted) accepted[kind(path)]++;
      for (const path of verdict.refused) refused[kind(path)]++;
    }
    // Both paths are taken for every kind of file, so the comparison above means something.
    for (const kind of ['envelope', 'outbox', 'validators'] as const) {
      expect(accepted[kind], `${kind} accepted`).toBeGreaterThan(10);
      expect(refused[kind], `${kind} refused`).toBeGreaterThan(0);
    }
  });
});

describe('layOutAsPrettier', () => {
  it('reflows named imports exactly at the print width', async () => {
    for (let length = 1; length <= 40; length++) {
      const names = ['alpha', `type ${'b'.repeat(length)}`, 'c'.repeat(length), 'delta'];
      const source = `import {\n${names.map((name) => `  ${name},`).join('\n')}\n} from 'module-name';\n`;
      const laidOut = layOutAsPrettier(source);
      expect(laidOut).toBe(await formatTypeScript(source));
    }
  });

  it('breaks statement heads exactly at the print width', async () => {
    for (let length = 1; length <= 60; length++) {
      const name = 'n'.repeat(length);
      const sources = [
        `export const ${name}: Descriptor<'a.B', 1, P${name}> = {\n  a: 1,\n};\n`,
        `export function ${name}(payload: P${name}, meta?: Meta): E {\n  return f(payload, meta);\n}\n`,
        `export type ${name} = Envelope<'a.B', 1, P${name}>;\n`,
        `export type ${name} = A${name} | B${name} | C;\n`,
        `export type ${name} = A${name} | B${name}${name} | C${name};\n`,
        `export const ${name} = [a${name}, b${name}] as const;\n`,
      ];
      for (const source of sources) {
        const laidOut = layOutAsPrettier(source);
        if (laidOut !== undefined) expect(laidOut).toBe(await formatTypeScript(source));
        // Only lines this module cannot break (longer than the width even broken) are refused.
        else expect(source.split('\n').some((line) => line.length > 100)).toBe(true);
      }
    }
  });

  it('refuses text prettier would change or whose layout it does not know', () => {
    const refused = [
      'const a = 1;\n\n\nconst b = 2;\n',
      'const a = 1; \n',
      '\nconst a = 1;\n',
      'const a = "double";\n',
      "const a = 'it\\'s';\n",
      'const a = `template`;\n',
      `const a = f(${'x, '.repeat(40)}y);\n`,
      "import {} from 'x';\n",
      "import { a as b, c } from 'x';\n",
      'const ü = 1;\n',
    ];
    for (const source of refused) expect(layOutAsPrettier(source), source).toBeUndefined();
  });
});
