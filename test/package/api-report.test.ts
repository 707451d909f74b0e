/**
 * The supported surface of the package entries, `evgen` (src/index.ts), `evgen/runtime` /
 * `evgen-runtime` (src/runtime/index.ts) and the data-layer adapters (`evgen-runtime/kysely`, …), pinned in committed lists (api-report/*.txt: one
 * exported name a line with whether it is a value or only a type). Adding, removing or turning a
 * value into a type fails here until the list is rewritten on purpose:
 *
 *   EVGEN_UPDATE=1 npx vitest run test/package/api-report.test.ts   (then review the diff)
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UPDATE_EXPECTED } from '../support/update-expected.js';
import { REPO } from './packed-install.js';
import { API_ENTRIES as ENTRIES, apiProgram, exportedNames } from './api-entries.js';

function reportText(entry: (typeof ENTRIES)[number], names: readonly string[]): string {
  return [
    `# Public API of ${entry.name} (${entry.source}): ${names.length} names.`,
    '# Checked by test/package/api-report.test.ts; rewrite with EVGEN_UPDATE=1 and review the diff.',
    ...names,
    '',
  ].join('\n');
}

describe('public API report', () => {
  const program = apiProgram();

  it.each(ENTRIES)('$name exports exactly the names in $report', async (entry) => {
    const actual = reportText(entry, exportedNames(program, entry.source));
    const path = join(REPO, entry.report);
    if (UPDATE_EXPECTED) await writeFile(path, actual);
    const expected = await readFile(path, 'utf8').catch(() => '');
    expect(
      actual,
      `${entry.report} differs from what ${entry.source} exports: if the change is deliberate, run EVGEN_UPDATE=1 npx vitest run test/package/api-report.test.ts`,
    ).toBe(expected);
  });

  it('docs/reference/runtime.md lists every name of evgen-runtime, one line each, and nothing else', async () => {
    const readme = await readFile(join(REPO, 'docs/reference/runtime.md'), 'utf8');
    const start = readme.indexOf('## `evgen-runtime`: every exported name');
    expect(start, 'section "## `evgen-runtime`: every exported name"').toBeGreaterThan(0);
    const end = readme.indexOf('\n#', start + 1);
    const listed = [...readme.slice(start, end).matchAll(/^- `([^`]+)` — \S/gm)].map((m) => m[1]!);
    const exported = exportedNames(program, 'src/runtime/index.ts').map(
      (line) => line.split('\t')[0]!,
    );
    expect([...listed].sort()).toEqual(exported);
    expect(new Set(listed).size).toBe(listed.length);
  });
});
