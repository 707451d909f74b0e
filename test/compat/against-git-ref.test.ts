/**
 * `evgen check --against <ref>` in a temporary git repository (never the project's): released
 * versions must not change or disappear; new versions are checked per mode; unknown refs are
 * bad input; a ref from before the events folder existed makes everything new.
 */
import { execFile } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { evgen, exampleCopy } from './support/cli-run.js';

const run = promisify(execFile);
let repo: Awaited<ReturnType<typeof exampleCopy>>;

async function git(...args: string[]): Promise<string> {
  const { stdout } = await run(
    'git',
    ['-c', 'user.name=evgen test', '-c', 'user.email=test@example.invalid', ...args],
    { cwd: repo.dir },
  );
  return stdout.trim();
}

beforeEach(async () => {
  repo = await exampleCopy();
  await git('init', '-q', '-b', 'main');
  await writeFile(join(repo.dir, 'README.md'), 'before the catalog\n');
  await git('add', 'README.md');
  await git('commit', '-q', '-m', 'start');
  await git('tag', 'before-events');
  await git('add', 'events');
  await git('commit', '-q', '-m', 'release the catalog');
});
afterEach(async () => {
  await repo.dispose();
});

/** `evgen check --against HEAD --format json`, expected to fail (exit 1): its report. */
async function failedCheckAgainstHead(): Promise<{
  pairsChecked: number;
  violations: { version: number; against: number; code: string }[];
}> {
  const result = await evgen(
    'check',
    '--events',
    repo.events,
    '--against',
    'HEAD',
    '--format',
    'json',
  );
  expect(result.code).toBe(1);
  return JSON.parse(result.stdout) as Awaited<ReturnType<typeof failedCheckAgainstHead>>;
}

const orderCreated = (file: string) => join(repo.events, 'order', 'OrderCreated', file);

describe('evgen check --against', () => {
  it('passes an unchanged catalog', async () => {
    const result = await evgen('check', '--events', repo.events, '--against', 'HEAD');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^evgen check: compatible against HEAD \(6 events, 0 version pairs checked\)$/m,
    );
  });

  it('catches an edited released version', async () => {
    const v1 = JSON.parse(await readFile(orderCreated('v1.schema.json'), 'utf8')) as {
      properties: Record<string, unknown>;
    };
    v1.properties['note'] = { type: 'string' };
    await writeFile(orderCreated('v1.schema.json'), JSON.stringify(v1, null, 2));
    const result = await evgen('check', '--events', repo.events, '--against', 'HEAD');
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      /events\/order\/OrderCreated\/v1\.schema\.json: RELEASED_VERSION_CHANGED: v1 of order\.OrderCreated was released and has changed/,
    );
    expect(result.stdout).toContain(
      'hint: released versions are immutable: revert the edit and add v3 with the change',
    );
  });

  it('checks a new version against the released text of an edited version, so the edit is blamed once', async () => {
    const v1Text = await readFile(orderCreated('v1.schema.json'), 'utf8');
    const v2Text = await readFile(orderCreated('v2.schema.json'), 'utf8');
    // v1 edited in place: quantities of 0 allowed. v3 (new) is v2 unchanged.
    await writeFile(
      orderCreated('v1.schema.json'),
      v1Text.replace(
        '"quantity": { "type": "integer", "minimum": 1 }',
        '"quantity": { "type": "integer", "minimum": 0 }',
      ),
    );
    expect(await readFile(orderCreated('v1.schema.json'), 'utf8')).not.toBe(v1Text);
    await writeFile(orderCreated('v3.schema.json'), v2Text);
    const report = await failedCheckAgainstHead();
    expect(report.pairsChecked).toBe(2);
    expect(report.violations.map((v) => [v.version, v.code])).toEqual([
      [1, 'RELEASED_VERSION_CHANGED'],
    ]);
  });

  it('catches an edit in a shared schema a released version references', async () => {
    const money = join(repo.events, '_common', 'money.schema.json');
    const schema = JSON.parse(await readFile(money, 'utf8')) as {
      properties: Record<string, unknown>;
    };
    schema.properties['currency'] = { type: 'string', pattern: '^[A-Z]{3,4}$' };
    await writeFile(money, JSON.stringify(schema, null, 2));
    const rules = (await failedCheckAgainstHead()).violations.map((v) => v.code);
    expect(new Set(rules)).toEqual(new Set(['RELEASED_VERSION_CHANGED']));
    expect(rules.length).toBeGreaterThanOrEqual(2);
  });

  it('catches a deleted released version', async () => {
    await rm(orderCreated('v2.schema.json'));
    const result = await evgen('check', '--events', repo.events, '--against', 'HEAD');
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      /events\/order\/OrderCreated\/v2\.schema\.json: RELEASED_VERSION_DELETED: v2 of order\.OrderCreated was released and has been deleted/,
    );
  });

  it('checks only new versions, per mode', async () => {
    const v2 = JSON.parse(await readFile(orderCreated('v2.schema.json'), 'utf8')) as {
      properties: Record<string, unknown>;
      required: string[];
    };
    v2.properties['priority'] = { type: 'integer' };
    v2.required.push('priority');
    await writeFile(orderCreated('v3.schema.json'), JSON.stringify(v2, null, 2));
    const report = await failedCheckAgainstHead();
    expect(report.pairsChecked).toBe(2);
    expect(report.violations.map((v) => [v.version, v.against, v.code])).toEqual([
      [3, 1, 'REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL'],
      [3, 2, 'REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL'],
    ]);
  });

  it('treats everything as new at a ref where the events folder did not exist yet', async () => {
    const result = await evgen('check', '--events', repo.events, '--against', 'before-events');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /compatible against before-events \(6 events, 1 version pairs checked\)/,
    );
  });

  it('exits 2 with a clear message for a ref that does not exist', async () => {
    const result = await evgen('check', '--events', repo.events, '--against', 'no-such-branch');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('git ref "no-such-branch" does not exist');
    // It names refs that exist, never the missing one as an example.
    expect(result.stderr).toMatch(/refs that exist: .*main/);
    expect(result.stderr).toContain('before-events');
    expect(result.stderr).not.toMatch(/e\.g\. no-such-branch|e\.g\. origin\/main/);
    expect(result.stdout).toBe('');
  });

  it('suggests git fetch for a missing remote branch, and says when the clone is shallow', async () => {
    // A shallow clone of the repository, as CI checkouts make (one commit, no other branch).
    const clone = join(repo.dir, '..', `${basename(repo.dir)}-clone`);
    await git('clone', '-q', '--depth=1', `file://${repo.dir}`, clone);
    try {
      const result = await evgen(
        'check',
        '--events',
        join(clone, 'events'),
        '--against',
        'origin/release',
      );
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('git ref "origin/release" does not exist');
      expect(result.stderr).toMatch(/refs that exist: .*origin\/main/);
      expect(result.stderr).toContain('git fetch origin release:refs/remotes/origin/release');
      expect(result.stderr).toContain('this clone is shallow');
    } finally {
      await rm(clone, { recursive: true, force: true });
    }
  });
});
