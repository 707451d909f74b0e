/**
 * `evgen check --against` with what buf's `--against` accepts besides a local ref: a remote git
 * repository (a bare repository by file:// URL, fetched shallow, #ref and #subdir), a tarball, and
 * a catalog package fetched by npm's client (`npm:<spec>`, here a local tarball spec: no network).
 * In each, the released v1 was edited in place in the working tree: the check must say so.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAgainst } from '../../src/compat/against-source.js';
import { eventJson, payloadSchema, writeFiles } from '../catalog/temp-catalog.js';
import { runCliCaptured } from '../cli/capture-output.js';

const run = promisify(execFile);
let dir: string;
let work: string;
let bare: string;
let tarball: string;
let packed: string;

const released = {
  'order/OrderPaid/event.json': eventJson('order', 'OrderPaid'),
  'order/OrderPaid/v1.schema.json': payloadSchema({ amount: { type: 'integer' } }),
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'evgen-against-sources-'));
  const origin = join(dir, 'origin');
  await writeFiles(join(origin, 'catalog/events'), released);
  await writeFiles(join(origin, 'catalog'), {
    'package.json': { name: '@acme/orders-catalog', version: '1.0.0', files: ['events'] },
  });
  const git = (cwd: string, ...args: string[]) => run('git', args, { cwd });
  await git(origin, 'init', '--quiet', '--initial-branch=main');
  await git(origin, 'add', '.');
  await git(origin, '-c', 'user.name=t', '-c', 'user.email=t@e', 'commit', '--quiet', '-m', 'v1');
  bare = join(dir, 'origin.git');
  await git(dir, 'clone', '--quiet', '--bare', origin, bare);
  tarball = join(dir, 'events.tgz');
  await run('tar', ['-czf', tarball, '-C', join(origin, 'catalog'), 'events']);
  await run('npm', ['pack', '--pack-destination', dir], { cwd: join(origin, 'catalog') });
  packed = join(dir, 'acme-orders-catalog-1.0.0.tgz');

  // The working tree (not a git repository): v1 edited in place.
  work = join(dir, 'work');
  await writeFiles(join(work, 'events'), {
    ...released,
    'order/OrderPaid/v1.schema.json': payloadSchema({ amount: { type: 'string' } }),
  });
}, 120_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const check = (against: string) =>
  runCliCaptured('check', '--events', join(work, 'events'), '--no-cache', '--against', against);

describe('evgen check --against sources', () => {
  it.each([
    ['a remote git repository', () => `${pathToFileURL(bare).href}#ref=main,subdir=catalog/events`],
    ['a tarball', () => tarball],
    ['a catalog package tarball (npm pack output)', () => packed],
    ['a catalog package by npm spec', () => `npm:${packed}`],
  ])('%s: a released version edited in place is reported', async (_name, against) => {
    const result = await check(against());
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain('RELEASED_VERSION_CHANGED');
    expect(result.code).toBe(1);
  });

  it('unchanged against the remote repository passes', async () => {
    const result = await runCliCaptured(
      'check',
      '--events',
      join(dir, 'origin/catalog/events'),
      '--no-cache',
      '--against',
      `${pathToFileURL(bare).href}#main,subdir=catalog/events`,
    );
    expect(result.code).toBe(0);
  });

  it('a ref the remote does not have, a missing tarball and an unknown option are bad input', async () => {
    const missingRef = await check(`${pathToFileURL(bare).href}#ref=nope,subdir=catalog/events`);
    expect(missingRef.code).toBe(2);
    expect(missingRef.stderr).toContain('cannot fetch nope');
    const missingFile = await check(join(dir, 'nothing.tgz'));
    expect(missingFile.code).toBe(2);
    expect(missingFile.stderr).toContain('does not exist');
    expect(() => parseAgainst('x.tgz#depth=1')).toThrow('unknown --against option');
    expect(() => parseAgainst('x.tgz#subdir=../up')).toThrow('inside the source');
  });

  it('tells the kinds apart', () => {
    expect(parseAgainst('origin/main').kind).toBe('git-ref');
    expect(parseAgainst('https://github.com/acme/orders.git#v1').kind).toBe('git-remote');
    expect(parseAgainst('git@github.com:acme/orders.git').kind).toBe('git-remote');
    expect(parseAgainst('dist/catalog-1.2.0.tgz').kind).toBe('tarball');
    expect(parseAgainst('npm:@acme/orders-catalog@1.2.0')).toMatchObject({
      kind: 'package',
      location: '@acme/orders-catalog@1.2.0',
    });
  });
});
