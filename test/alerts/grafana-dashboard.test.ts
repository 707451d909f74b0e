/**
 * `evgen dashboard`: the Grafana dashboard generated from the repository's catalog and
 * `_alerts.json` — one row for the outbox and one per consumer (the same consumers `evgen alerts`
 * makes rule groups for), every query valid PromQL (`promtool check rules` on them as recording
 * rules) over series `createPrometheusMetrics` really registers, each consumer's queries filtered
 * on its own `consumer` label, the thresholds of `_alerts.json` drawn on the panels; the same
 * input gives the same bytes, and `--check` says stale or missing.
 */
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { createPrometheusMetrics } from 'evgen/runtime';

const run = promisify(execFile);
const REPO = resolve(import.meta.dirname, '../..');
const CLI = join(REPO, 'src/cli/main.ts');
const TSX = pathToFileURL(join(REPO, 'node_modules/tsx/dist/loader.mjs')).href;

async function exec(command: string, args: readonly string[], cwd: string) {
  try {
    const { stdout, stderr } = await run(command, [...args], { cwd, maxBuffer: 16 << 20 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: string; stderr?: string };
    if (typeof failed.code !== 'number') throw error; // promtool or tsx missing: fail loudly
    return { code: failed.code, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}
const evgen = (args: readonly string[], cwd: string) =>
  exec(process.execPath, ['--import', TSX, CLI, ...args], cwd);

interface Panel {
  readonly type: string;
  readonly id: number;
  readonly title: string;
  readonly gridPos: { h: number; w: number; x: number; y: number };
  readonly fieldConfig?: {
    defaults: { thresholds: { steps: { color: string; value: number | null }[] } };
  };
  readonly targets?: { refId: string; expr: string }[];
}

const OVERRIDES = {
  consumers: {
    'inventory-service': { consumerLag: { warning: 100, critical: 1000 }, deadLetterDepth: 5 },
  },
};

describe('evgen dashboard', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'evgen-dashboard-'));
    await cp(join(REPO, 'events'), join(dir, 'events'), { recursive: true });
    await writeFile(join(dir, 'events/_alerts.json'), JSON.stringify(OVERRIDES));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('a row per consumer of the catalog, valid PromQL over registered series, thresholds from _alerts.json; --check', async () => {
    expect(await evgen(['dashboard', '--out', 'dashboard.json'], dir)).toMatchObject({
      code: 0,
      stderr: '',
    });
    const text = await readFile(join(dir, 'dashboard.json'), 'utf8');
    const dashboard = JSON.parse(text) as { uid: string; panels: Panel[] };
    expect(dashboard.uid).toBe('evgen');

    // The rows: the outbox, then the consumers evgen alerts makes groups for, in that order.
    expect((await evgen(['alerts', '--out', 'rules.yml'], dir)).code).toBe(0);
    const groups = [
      ...(await readFile(join(dir, 'rules.yml'), 'utf8')).matchAll(
        /name: "evgen-consumer-([^"]+)"/g,
      ),
    ].map((m) => m[1]!);
    expect(groups.length).toBeGreaterThan(0);
    const rows = dashboard.panels.filter((p) => p.type === 'row').map((p) => p.title);
    expect(rows).toEqual(['Outbox and relays', ...groups.map((name) => `Consumer ${name}`)]);

    // Ids unique; no two panels on the same spot.
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    const spots = dashboard.panels.map((p) => `${p.gridPos.x},${p.gridPos.y}`);
    expect(new Set(spots).size).toBe(spots.length);

    // Every consumer row's queries are filtered on that consumer.
    let consumer: string | undefined;
    const queries: { panel: Panel; expr: string }[] = [];
    for (const panel of dashboard.panels) {
      if (panel.type === 'row') {
        consumer = panel.title.startsWith('Consumer ') ? panel.title.slice(9) : undefined;
        continue;
      }
      for (const target of panel.targets ?? []) {
        queries.push({ panel, expr: target.expr });
        if (consumer !== undefined) expect(target.expr).toContain(`consumer="${consumer}"`);
      }
    }
    expect(queries.length).toBeGreaterThan(10);

    // Every series a query names is one createPrometheusMetrics registers.
    const registered = new Set<string>();
    const registry = new Registry();
    createPrometheusMetrics({ registry });
    for (const metric of registry.getMetricsAsArray()) {
      const { type } = await (metric as unknown as { get(): Promise<{ type: string }> }).get();
      registered.add(type === 'histogram' ? `${metric.name}_bucket` : metric.name);
    }
    for (const { expr } of queries)
      for (const [name] of expr.matchAll(/evgen_[a-z_]+/g))
        expect(registered, `${name} in ${expr}`).toContain(name);

    // Valid PromQL: promtool checks them as recording rules.
    const recording = [
      'groups:',
      '  - name: evgen-dashboard',
      '    rules:',
      ...queries.flatMap(({ expr }, index) => [
        `      - record: evgen_dashboard:query_${index}`,
        `        expr: ${JSON.stringify(expr)}`,
      ]),
      '',
    ].join('\n');
    await writeFile(join(dir, 'queries.yml'), recording);
    const checked = await exec('promtool', ['check', 'rules', 'queries.yml'], dir);
    expect(checked.stdout + checked.stderr).toContain(`SUCCESS: ${queries.length} rules found`);
    expect(checked.code).toBe(0);

    // The thresholds of _alerts.json on inventory's panels, the defaults on shipping's.
    const steps = (row: string, title: string) => {
      const start = dashboard.panels.findIndex((p) => p.type === 'row' && p.title === row);
      const panel = dashboard.panels.slice(start + 1).find((p) => p.title === title)!;
      return panel.fieldConfig!.defaults.thresholds.steps.map((s) => s.value);
    };
    expect(steps('Consumer inventory-service', 'Lag (records waiting)')).toEqual([null, 100, 1000]);
    expect(steps('Consumer inventory-service', 'Queue depths (from the broker)')).toEqual([
      null,
      5,
    ]);
    if (groups.includes('shipping-service'))
      expect(steps('Consumer shipping-service', 'Lag (records waiting)')).toEqual([
        null,
        1000,
        10000,
      ]);

    // Deterministic, and --check: current → 0; thresholds changed → 1, file untouched.
    expect(await evgen(['dashboard', '--out', 'dashboard.json', '--check'], dir)).toMatchObject({
      code: 0,
    });
    await writeFile(join(dir, 'events/_alerts.json'), '{}');
    const stale = await evgen(['dashboard', '--out', 'dashboard.json', '--check'], dir);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain('stale — run evgen dashboard --out dashboard.json');
    expect(await readFile(join(dir, 'dashboard.json'), 'utf8')).toBe(text);
  }, 240_000); // five CLI runs and promtool: minutes on a loaded 2-core machine
});
