/**
 * The README's performance table cannot drift from docs/performance.md: each of its rows names a
 * goal that is a row of that page (same words), every number it shows is in that row's
 * measurement, and its status is that row's status up to the first colon or comma (the page says
 * why; a README row may say it too, shorter).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from './markdown-blocks.js';

interface Row {
  readonly goal: string;
  readonly measured: string;
  readonly status: string;
}

/** The rows of every `| goal | measured | status |` table in `text` (header and rule left out). */
function tableRows(text: string): Row[] {
  const rows: Row[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('| ') || line.startsWith('| ---') || line.startsWith('| goal ')) continue;
    const cells = line.slice(2, -2).split(' | ');
    if (cells.length !== 3) continue;
    rows.push({ goal: cells[0]!, measured: cells[1]!, status: cells[2]! });
  }
  return rows;
}

/** The README section `## Performance`, up to the next `## ` heading. */
function readmeSection(readme: string): string {
  const start = readme.indexOf('\n## Performance\n');
  expect(start, 'README.md has a "## Performance" section').toBeGreaterThanOrEqual(0);
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, end < 0 ? undefined : end);
}

/** Numbers as written (`8 952`, `0.53`, `1 020`), spaces inside them dropped. */
function numbers(text: string): string[] {
  return [...text.matchAll(/\d(?:[\d.]|[  ](?=\d{3}\b))*/g)].map((m) =>
    m[0].replace(/[  ]/g, '').replace(/\.$/, ''),
  );
}

const page = tableRows(readFileSync(join(REPO, 'docs/performance.md'), 'utf8'));
const readmeRows = tableRows(readmeSection(readFileSync(join(REPO, 'README.md'), 'utf8')));

describe('README performance table', () => {
  it('has rows, and links the full page', () => {
    expect(readmeRows.length).toBeGreaterThanOrEqual(5);
    expect(readFileSync(join(REPO, 'README.md'), 'utf8')).toContain('](docs/performance.md)');
  });

  it.each(readmeRows.map((row) => [row.goal, row] as const))('%s', (_goal, row) => {
    const source = page.find((candidate) => candidate.goal === row.goal);
    expect(source, `docs/performance.md has no row whose goal is "${row.goal}"`).toBeDefined();
    const shown = new Set(numbers(source!.measured));
    for (const n of numbers(row.measured))
      expect(
        shown.has(n),
        `${n} is not in docs/performance.md's measurement of "${row.goal}"`,
      ).toBe(true);
    // The README may keep the page's reason after the status, shortened.
    expect(row.status.split(/[:,]/)[0]!.trim()).toBe(source!.status.split(/[:,]/)[0]!.trim());
  });
});

describe('number extraction', () => {
  it('reads grouped thousands, decimals and ranges', () => {
    expect(numbers('**0.53–0.59×** (8 952 vs 15 109 events/s), p99 13 ms.')).toEqual([
      '0.53',
      '0.59',
      '8952',
      '15109',
      '99',
      '13',
    ]);
  });
});
