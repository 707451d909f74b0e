/**
 * The operations guide's tables cannot drift: in docs/operations/README.md the metrics table is
 * rendered from the series `createPrometheusMetrics` registers (name, type, labels, help), the
 * alerts table from the rules `evgen alerts` generates (for one consumer subscribing to one event
 * type, default thresholds) and the thresholds table from the defaults; each must equal the
 * committed block between its markers.
 * After a deliberate change: EVGEN_UPDATE=1 npx vitest run test/docs/operations-tables.test.ts
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { createPrometheusMetrics } from 'evgen/runtime';
import type { Catalog } from '../../src/catalog/model.js';
import { alertGroups } from '../../src/codegen/alerts/alert-rules.js';
import {
  DEFAULT_THRESHOLDS,
  resolveThresholds,
} from '../../src/codegen/alerts/alert-thresholds.js';
import { UPDATE_EXPECTED } from '../support/update-expected.js';
import { REPO } from './markdown-blocks.js';

const PAGE = 'docs/operations/README.md';
const HOW = 'EVGEN_UPDATE=1 npx vitest run test/docs/operations-tables.test.ts';

/** Replaces (or checks) the block between `<!-- name:start -->` and `<!-- name:end -->`. */
export async function expectBlock(page: string, name: string, rendered: string): Promise<void> {
  const path = join(REPO, page);
  const text = await readFile(path, 'utf8');
  const start = `<!-- ${name}:start -->\n`;
  const end = `<!-- ${name}:end -->`;
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  expect(from, `${page} has no ${start.trim()} … ${end} block`).toBeGreaterThanOrEqual(0);
  expect(to).toBeGreaterThan(from);
  const committed = text.slice(from + start.length, to);
  if (UPDATE_EXPECTED && committed !== rendered)
    await writeFile(path, text.slice(0, from + start.length) + rendered + text.slice(to));
  else
    expect(rendered, `${page}'s ${name} differs from the code: if deliberate, run ${HOW}`).toBe(
      committed,
    );
}

async function renderMetricsTable(): Promise<string> {
  const registry = new Registry();
  createPrometheusMetrics({ registry });
  const rows = await Promise.all(
    registry.getMetricsAsArray().map(async (metric) => {
      const full = metric as unknown as {
        get(): Promise<{ type: string; help: string }>;
        labelNames: readonly string[];
      };
      const { type, help } = await full.get();
      const labels = full.labelNames;
      return `| \`${metric.name}\` | ${type} | ${labels.map((l) => `\`${l}\``).join(', ')} | ${help} |`;
    }),
  );
  return ['| series | type | labels | meaning |', '| --- | --- | --- | --- |', ...rows, ''].join(
    '\n',
  );
}

/** A table cell: pipes escaped, so PromQL's `or`/regex bars do not split the row. */
const cell = (text: string) => text.replace(/\|/g, '\\|');

function renderAlertsTable(): string {
  const catalog: Catalog = {
    root: '',
    events: [],
    consumers: [{ name: 'my-consumer', description: '', file: '', subscribes: ['my.EventType'] }],
  };
  const rows = alertGroups(catalog, resolveThresholds(catalog, {}, '_alerts.json')).flatMap(
    (group) =>
      group.rules.map(
        (rule) =>
          `| \`${rule.alert}\` | ${rule.severity} | \`${cell(rule.expr)}\` | ${rule.for ?? '—'} | ${cell(rule.runbook)} |`,
      ),
  );
  return [
    '| alert | severity | fires when | for | what to do |',
    '| --- | --- | --- | --- | --- |',
    ...rows,
    '',
  ].join('\n');
}

function renderThresholdsTable(): string {
  const rows = Object.entries(DEFAULT_THRESHOLDS)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([key, value]) => `| \`${key}\` | \`${JSON.stringify(value)}\` |`);
  return ['| key | default |', '| --- | --- |', ...rows, ''].join('\n');
}

describe('operations tables rendered from the code', () => {
  it('the alerts table is every rule evgen alerts generates, with the default thresholds', async () => {
    await expectBlock(PAGE, 'alerts-table', renderAlertsTable());
  });

  it('the thresholds table is every default of _alerts.json', async () => {
    await expectBlock(PAGE, 'thresholds-table', renderThresholdsTable());
  });

  it('the metrics table is every series createPrometheusMetrics registers', async () => {
    await expectBlock(PAGE, 'metrics-table', await renderMetricsTable());
  });
});
