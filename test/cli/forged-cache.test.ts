/**
 * A build cache never turns a verdict: `check`, `check --against` and `build --check` say with a
 * cache what they say with `--no-cache`, whatever a pull request commits (a resealed entry for a
 * tampered generated file, a `loaded-versions/` entry pairing an edited released version with
 * its old schema, keyed to CI's checkout path) and whatever another user plants. Each case runs
 * in a fresh clone at another path, as CI does, with a different user's cache secret.
 */
import { execFileSync } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { generatorFingerprint } from '../../src/cli/build-cache.js';
import { cacheKey } from '../../src/codegen/generation-cache.js';
import { runCliCaptured, type CliResult } from './capture-output.js';

let dir: string;
const savedCacheHome = process.env.XDG_CACHE_HOME;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'evgen-forged-cache-'));
});
afterEach(() => {
  if (savedCacheHome === undefined) delete process.env.XDG_CACHE_HOME;
  else process.env.XDG_CACHE_HOME = savedCacheHome;
  rmSync(dir, { recursive: true, force: true });
});

/** Runs evgen as the user whose per-user cache folder is `home` (each has its own secret). */
async function evgenAs(home: string, ...args: string[]): Promise<CliResult> {
  process.env.XDG_CACHE_HOME = join(dir, home);
  return runCliCaptured(...args);
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync(
    'git',
    ['-c', 'user.name=evgen test', '-c', 'user.email=test@example.invalid', ...args],
    { cwd, encoding: 'utf8' },
  );
}

/** The event of the reproductions; `countType` is the type of its `count` property. */
function writeThing(root: string, countType: string): void {
  const folder = join(root, 'events', 'shop', 'Thing');
  mkdirSync(folder, { recursive: true });
  writeFileSync(
    join(folder, 'event.json'),
    '{"description":"d","aggregate":"Shop","aggregateId":"id","kafka":{"topic":"t"}}',
  );
  writeFileSync(
    join(folder, 'v1.schema.json'),
    `{"type":"object","required":["id"],"properties":{"id":{"type":"string"},"count":{"type":"${countType}"}}}`,
  );
}

const folders = (root: string) => [
  '--events',
  join(root, 'events'),
  '--out',
  join(root, 'generated'),
];

/** Every file under `root`, relative. */
function filesUnder(root: string, sub = ''): string[] {
  if (!existsSync(join(root, sub))) return [];
  return readdirSync(join(root, sub), { withFileTypes: true }).flatMap((entry) => {
    const path = sub === '' ? entry.name : `${sub}/${entry.name}`;
    return entry.isDirectory() ? filesUnder(root, path) : [path];
  });
}

/** What an attacker can seal with: the plain digest (no secret), or their own cache secret. */
type Forger = (body: string) => string;
const plainDigest: Forger = (body) => createHash('sha256').update(body).digest('hex');
const ownSecret =
  (home: string): Forger =>
  (body) =>
    createHmac('sha256', Buffer.from(readSecret(home), 'hex'))
      .update(body)
      .digest('hex');
const readSecret = (home: string) =>
  readFileSync(join(dir, home, 'evgen', 'build-cache', 'secret'), 'utf8');

function reseal(path: string, body: unknown, forge: Forger): void {
  const text = JSON.stringify(body);
  writeFileSync(path, `${forge(text)}\n${text}`);
}

/** The verdicts CI would give in `clone`: default cache, the committed cache, and no cache. */
async function verdicts(clone: string, command: string[]): Promise<number[]> {
  const codes: number[] = [];
  for (const extra of [[], ['--cache-dir', join(clone, '.evgen-cache')], ['--no-cache']]) {
    // Twice each: the second run may read what the first one wrote.
    for (let run = 0; run < 2; run++) {
      const result = await evgenAs('ci-user', ...command, ...extra);
      codes.push(result.code);
    }
  }
  return codes;
}

describe.each([
  ['a plain digest', () => plainDigest],
  ["the attacker's own cache secret", () => ownSecret('attacker')],
])('a committed cache sealed with %s', (_, forger) => {
  it('cannot hide a tampered generated file from build --check', async () => {
    const repo = join(dir, 'repo');
    writeThing(repo, 'string');
    git(dir, 'init', '-q', repo);
    const cache = ['--cache-dir', join(repo, '.evgen-cache')];
    expect((await evgenAs('attacker', 'build', ...folders(repo), ...cache)).code).toBe(0);
    git(repo, 'add', 'events', 'generated');
    git(repo, 'commit', '-qm', 'base');

    const validators = 'shop/thing/validators.js';
    const tampered = `${readFileSync(join(repo, 'generated', validators), 'utf8')}/*PWNED*/\n`;
    writeFileSync(join(repo, 'generated', validators), tampered);
    let resealed = 0;
    for (const file of filesUnder(join(repo, '.evgen-cache', 'entries'))) {
      const path = join(repo, '.evgen-cache', 'entries', file);
      const text = readFileSync(path, 'utf8');
      const body = JSON.parse(text.slice(text.indexOf('\n') + 1)) as {
        files: { path: string; content: string }[];
      };
      const entry = body.files.find((generated) => generated.path === validators);
      if (entry === undefined) continue;
      entry.content = tampered;
      reseal(path, body, forger());
      resealed++;
    }
    expect(resealed).toBe(1);
    rmSync(join(repo, '.evgen-cache', 'builds'), { recursive: true, force: true });
    rmSync(join(repo, '.evgen-cache', 'loaded-versions'), { recursive: true, force: true });
    git(repo, 'add', '-f', '.evgen-cache', 'generated');
    git(repo, 'commit', '-qm', 'pr');

    const clone = join(dir, 'ci');
    git(dir, 'clone', '-q', repo, clone);
    const codes = await verdicts(clone, ['build', '--check', ...folders(clone)]);
    expect(codes).toEqual([1, 1, 1, 1, 1, 1]);
  });

  it('cannot pass an edited released version through check, check --against or build --check', async () => {
    const repo = join(dir, 'repo');
    const clone = join(dir, 'ci');
    writeThing(repo, 'integer');
    git(dir, 'init', '-q', '-b', 'main', repo);
    expect((await evgenAs('attacker', 'build', ...folders(repo), '--no-cache')).code).toBe(0);
    expect(
      (await evgenAs('attacker', 'check', '--events', join(repo, 'events'), '--update-lock')).code,
    ).toBe(0);
    git(repo, 'add', 'events', 'generated');
    git(repo, 'commit', '-qm', 'release v1');
    git(repo, 'tag', 'base');

    // The attacker's own run leaves a genuine entry for v1 as released ...
    const cacheDir = join(repo, '.evgen-cache');
    expect(
      (
        await evgenAs(
          'attacker',
          'check',
          '--events',
          join(repo, 'events'),
          '--cache-dir',
          cacheDir,
        )
      ).code,
    ).toBe(0);
    const [genuine] = filesUnder(join(cacheDir, 'loaded-versions'));
    expect(genuine).toBeDefined();
    const text = readFileSync(join(cacheDir, 'loaded-versions', genuine!), 'utf8');
    const entries = JSON.parse(text.slice(text.indexOf('\n') + 1)) as [
      string,
      { content: string },
    ][];
    // ... then v1 is edited and the entry is paired with the edited file, filed under CI's path.
    writeThing(repo, 'string');
    const edited = readFileSync(join(repo, 'events/shop/Thing/v1.schema.json'), 'utf8');
    entries[0]![1].content = createHash('sha256').update(edited).digest('hex');
    rmSync(join(cacheDir, 'loaded-versions'), { recursive: true });
    mkdirSync(join(cacheDir, 'loaded-versions'));
    const key = cacheKey([await generatorFingerprint(), join(clone, 'events')]);
    reseal(join(cacheDir, 'loaded-versions', `${key}.json`), entries, forger());
    git(repo, 'add', '-f', 'events', '.evgen-cache');
    git(repo, 'commit', '-qm', 'pr');

    git(dir, 'clone', '-q', repo, clone);
    git(clone, 'fetch', '-q', 'origin', 'tag', 'base');
    const events = ['--events', join(clone, 'events')];
    expect(await verdicts(clone, ['check', ...events])).toEqual([1, 1, 1, 1, 1, 1]);
    expect(await verdicts(clone, ['check', ...events, '--against', 'base'])).toEqual([
      1, 1, 1, 1, 1, 1,
    ]);
    expect(await verdicts(clone, ['build', '--check', ...folders(clone)])).toEqual([
      1, 1, 1, 1, 1, 1,
    ]);
  });
});

describe('a cache folder someone else can write', () => {
  const validators = 'shop/thing/validators.js';

  /** A catalog whose generated/ is stale (exit 1 from build --check), built first with `cache`. */
  async function staleCatalog(root: string, ...cache: string[]): Promise<void> {
    writeThing(root, 'string');
    expect((await evgenAs('me', 'build', ...folders(root), ...cache)).code).toBe(0);
    writeFileSync(join(root, 'generated', validators), '/*PWNED*/\n', { flag: 'a' });
  }

  it('is refused in one line when another user owns it, and the verdict is the --no-cache one', async () => {
    const repo = join(dir, 'repo');
    const shared = join(dir, 'shared-cache');
    await staleCatalog(repo, '--cache-dir', shared);
    // Another user's folder, holding the tampered validator in a resealed entry: root can hand
    // the folder to that user here; anyone else opens it to all.
    const tampered = readFileSync(join(repo, 'generated', validators), 'utf8');
    rmSync(join(shared, 'builds'), { recursive: true });
    for (const file of filesUnder(join(shared, 'entries'))) {
      const path = join(shared, 'entries', file);
      const text = readFileSync(path, 'utf8');
      const body = JSON.parse(text.slice(text.indexOf('\n') + 1)) as {
        files: { path: string; content: string }[];
      };
      for (const entry of body.files) if (entry.path === validators) entry.content = tampered;
      reseal(path, body, plainDigest);
    }
    if (process.getuid?.() === 0) {
      for (const file of ['', ...filesUnder(shared)]) chownSync(join(shared, file), 65534, 65534);
    } else chmodSync(shared, 0o777);
    const result = await evgenAs('me', 'build', '--check', ...folders(repo), '--cache-dir', shared);
    expect(result.code).toBe(1);
    const refusals = result.stderr.split('\n').filter((line) => line.includes('cache'));
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toMatch(
      process.getuid?.() === 0
        ? /^evgen: build cache not used: .*shared-cache belongs to another user \(uid 65534\)$/
        : /^evgen: build cache not used: .*shared-cache is writable by other users/,
    );
    const noCache = await evgenAs('me', 'build', '--check', ...folders(repo), '--no-cache');
    expect(noCache.stdout).toBe(result.stdout);
  });

  it('is never the default: an output folder under a world-writable folder keeps its cache private', async () => {
    const shared = join(dir, 'tmp');
    mkdirSync(shared);
    chmodSync(shared, 0o1777);
    const project = join(shared, 'project');
    writeThing(project, 'string');
    expect((await evgenAs('me', 'build', ...folders(project))).code).toBe(0);
    const second = await evgenAs('me', 'build', ...folders(project));
    expect(second.stdout).toContain('inputs unchanged');
    expect(readdirSync(shared)).toEqual(['project']);
    expect(readdirSync(project).sort()).toEqual(['events', 'generated']);
    const root = join(dir, 'me', 'evgen', 'build-cache');
    expect(filesUnder(root).some((file) => file.startsWith('checkouts/'))).toBe(true);
  });

  it('is refused when the per-user cache folder lies inside the checkout being judged', async () => {
    const repo = join(dir, 'repo');
    await staleCatalog(repo);
    git(dir, 'init', '-q', repo);
    // A checkout whose XDG_CACHE_HOME points into itself: its secret could be committed.
    process.env.XDG_CACHE_HOME = join(repo, '.cache');
    const result = await runCliCaptured('build', '--check', ...folders(repo));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^evgen: build cache not used: .* lies inside the repository /m);
    expect(existsSync(join(repo, '.cache'))).toBe(false);
  });

  it('is refused when its secret is readable by others', async () => {
    const repo = join(dir, 'repo');
    await staleCatalog(repo);
    expect((await evgenAs('me', 'check', '--events', join(repo, 'events'))).code).toBe(0);
    chmodSync(join(dir, 'me', 'evgen', 'build-cache', 'secret'), 0o644);
    const result = await evgenAs('me', 'build', '--check', ...folders(repo));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/build cache not used: .*secret is not a private file/);
  });
});
