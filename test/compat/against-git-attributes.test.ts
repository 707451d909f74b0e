/**
 * `evgen check --against <ref>` reads the ref's tree as committed: a `.gitattributes` committed at
 * the ref (`export-ignore`, eol conversion) or a replace object (`refs/replace/*`) cannot hide or
 * alter a released version.
 */
import { execFile } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
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
});
afterEach(async () => {
  await repo.dispose();
});

async function release(attributes: string): Promise<void> {
  await writeFile(join(repo.dir, '.gitattributes'), attributes);
  await git('add', '.gitattributes', 'events');
  await git('commit', '-q', '-m', 'release the catalog');
}

async function changeQuantityToString(): Promise<void> {
  const file = join(repo.events, 'order', 'OrderCreated', 'v1.schema.json');
  const text = await readFile(file, 'utf8');
  const changed = text.replace(
    '"quantity": { "type": "integer", "minimum": 1 }',
    '"quantity": { "type": "string" }',
  );
  expect(changed).not.toBe(text);
  await writeFile(file, changed);
}

describe('evgen check --against ignores .gitattributes at the ref', () => {
  it('catches an edited released version although the ref marks the events export-ignore', async () => {
    await release('events/order/** export-ignore\nevents/** export-ignore\n');
    await changeQuantityToString();
    const result = await evgen('check', '--events', repo.events, '--against', 'HEAD');
    expect(result.stdout).toMatch(
      /events\/order\/OrderCreated\/v1\.schema\.json(#\/)?: RELEASED_VERSION_CHANGED/,
    );
    expect(result.code).toBe(1);
  });

  it('sees the committed bytes: eol conversion at the ref changes nothing', async () => {
    await release('*.json text eol=crlf\n');
    const unchanged = await evgen('check', '--events', repo.events, '--against', 'HEAD');
    expect(unchanged.stderr).toBe('');
    expect(unchanged.code).toBe(0);
    await changeQuantityToString();
    const changed = await evgen('check', '--events', repo.events, '--against', 'HEAD');
    expect(changed.code).toBe(1);
  });
});

describe('evgen check --against ignores replace objects', () => {
  it('catches an edited released version when the released commit is replaced by the edited one', async () => {
    // Without the lock, which would catch the edit on its own.
    await rm(join(repo.events, 'evgen.lock.json'), { force: true });
    await release('');
    const released = await git('rev-parse', 'HEAD');
    await changeQuantityToString();
    await git('commit', '-q', '-am', 'edit v1');
    await git('replace', released, await git('rev-parse', 'HEAD'));
    // git itself now shows the edited text at the released commit ...
    expect(await git('show', `${released}:events/order/OrderCreated/v1.schema.json`)).toContain(
      '"quantity": { "type": "string" }',
    );
    // ... evgen reads what was released.
    const result = await evgen('check', '--events', repo.events, '--against', released);
    expect(result.stdout).toMatch(
      /events\/order\/OrderCreated\/v1\.schema\.json(#\/)?: RELEASED_VERSION_CHANGED/,
    );
    expect(result.code).toBe(1);
  });
});
