/**
 * The catalog as it was at a git ref, for `evgen check --against <ref>`: the ref's copy of the
 * events folder is extracted into a temporary folder, loaded with the same loader as the working
 * tree, and the temporary folder is removed again.
 *
 * The files are read straight from the ref's tree objects (`git ls-tree` + `git cat-file`), never
 * through `git archive` or a checkout: those obey `.gitattributes` (`export-ignore`, filters,
 * eol), so a `.gitattributes` committed at the ref could hide a released version from the check.
 * Replace objects (`refs/replace/*`) are ignored for the same reason: a replacement would let the
 * repository show another blob in place of the released one.
 */
import { execFile } from 'node:child_process';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import { promisify } from 'node:util';
import { loadCatalog, type LoadCatalogOptions } from '../catalog/load-catalog.js';
import type { Catalog } from '../catalog/model.js';

const run = promisify(execFile);

/** The ref is unknown, or the folder is not in a git work tree: bad input (exit 2). */
export class GitRefError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GitRefError';
  }
}

/** git as the check runs it: the objects the ref really holds, never their replacements. */
const GIT_OPTIONS = ['--no-replace-objects'];
const gitEnvironment = () => ({ ...process.env, GIT_NO_REPLACE_OBJECTS: '1' });

export async function git(cwd: string, args: readonly string[]): Promise<string> {
  const { stdout } = await run('git', [...GIT_OPTIONS, ...args], {
    cwd,
    env: gitEnvironment(),
    maxBuffer: 256 * 1024 * 1024,
  });
  return stdout;
}

/** Runs `git cat-file --batch` for the object ids and returns each object's bytes, in order. */
function catFiles(cwd: string, objects: readonly string[]): Promise<Buffer[]> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', [...GIT_OPTIONS, 'cat-file', '--batch'], {
      cwd,
      env: gitEnvironment(),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const chunks: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) {
        reject(new Error(`git cat-file failed: ${stderr.trim()}`));
        return;
      }
      const out = Buffer.concat(chunks);
      const contents: Buffer[] = [];
      let offset = 0;
      for (const object of objects) {
        const headerEnd = out.indexOf(0x0a, offset);
        const header = out.toString('utf8', offset, headerEnd).split(' ');
        if (header[0] !== object || header[1] !== 'blob') {
          reject(new Error(`git cat-file: unexpected answer for ${object}`));
          return;
        }
        const size = Number(header[2]);
        contents.push(out.subarray(headerEnd + 1, headerEnd + 1 + size));
        offset = headerEnd + 1 + size + 1;
      }
      resolve(contents);
    });
    child.stdin.end(objects.map((object) => `${object}\n`).join(''));
  });
}

/**
 * Writes the files under `path` in `commit`'s tree into `target`, byte for byte as committed
 * (no attributes, filters or eol conversion). Symbolic links are recreated as links so the loader
 * reports them as it does in the working tree; submodules are skipped.
 */
export async function extractTree(top: string, commit: string, path: string, target: string) {
  const listing = await git(top, ['ls-tree', '-r', '-z', '--full-tree', commit, '--', path]);
  const blobs: { object: string; file: string }[] = [];
  const links: { object: string; file: string }[] = [];
  for (const entry of listing.split('\0')) {
    if (entry === '') continue;
    const tab = entry.indexOf('\t');
    const [mode, type, object] = entry.slice(0, tab).split(' ');
    const file = entry.slice(tab + 1);
    // git never stores such paths; refuse rather than write outside the temporary folder.
    if (file.startsWith('/') || file.split('/').some((part) => part === '..' || part === ''))
      throw new GitRefError(`the ref's tree holds an unsafe path ${JSON.stringify(file)}`);
    if (type !== 'blob' || object === undefined) continue;
    (mode === '120000' ? links : blobs).push({ object, file });
  }
  const all = [...blobs, ...links];
  const contents =
    all.length === 0
      ? []
      : await catFiles(
          top,
          all.map((entry) => entry.object),
        );
  for (const [index, { file }] of all.entries()) {
    const destination = join(target, ...file.split('/'));
    await mkdir(dirname(destination), { recursive: true });
    if (index < blobs.length) await writeFile(destination, contents[index]!);
    else await symlink(contents[index]!.toString('utf8'), destination);
  }
}

/** How many existing refs a "does not exist" message names. */
const REFS_SHOWN = 8;

/**
 * Why `ref` is missing and what to try instead: refs that do exist (branches, remote branches,
 * tags), and `git fetch` when the ref looks like a remote branch or the clone is shallow (CI
 * checkouts often fetch one commit and no other branch).
 */
async function missingRefMessage(top: string, ref: string): Promise<string> {
  const listed = await git(top, [
    'for-each-ref',
    '--format=%(refname:short)',
    '--sort=-committerdate',
    'refs/heads',
    'refs/remotes',
    'refs/tags',
  ]).catch(() => '');
  const existing = listed
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.endsWith('/HEAD'));
  const shallow = await git(top, ['rev-parse', '--is-shallow-repository']).then(
    (out) => out.trim() === 'true',
    () => false,
  );
  const slash = ref.indexOf('/');
  const remote = slash > 0 ? ref.slice(0, slash) : undefined;
  const remotes = (await git(top, ['remote']).catch(() => ''))
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  const parts = [`git ref "${ref}" does not exist here`];
  parts.push(
    existing.length === 0
      ? 'this repository has no branches or tags yet'
      : `refs that exist: ${existing.slice(0, REFS_SHOWN).join(', ')}${existing.length > REFS_SHOWN ? ', …' : ''}`,
  );
  if (remote !== undefined && remotes.includes(remote))
    parts.push(
      `to get it, run git fetch ${remote} ${ref.slice(slash + 1)}:refs/remotes/${ref}${shallow ? ' (this clone is shallow: in CI fetch with enough history, e.g. actions/checkout fetch-depth: 0)' : ''}`,
    );
  else if (shallow)
    parts.push('this clone is shallow: fetch the ref first (git fetch origin <branch>)');
  return parts.join('; ');
}

/** Loads `eventsDir` as it is at `ref`; an empty catalog when the folder did not exist there. */
export async function loadCatalogAtRef(
  eventsDir: string,
  ref: string,
  options: LoadCatalogOptions = {},
): Promise<Catalog> {
  const dir = await realpath(eventsDir).catch(() => {
    throw new GitRefError(`the events folder ${eventsDir} does not exist`);
  });
  const top = await git(dir, ['rev-parse', '--show-toplevel']).then(
    (out) => realpath(out.trim()),
    () => {
      throw new GitRefError(
        `${eventsDir} is not inside a git repository, so --against ${ref} cannot be used`,
      );
    },
  );
  if (ref.startsWith('-')) throw new GitRefError(`"${ref}" is not a git ref`);
  const commit = await git(top, [
    'rev-parse',
    '--verify',
    '--quiet',
    '--end-of-options',
    `${ref}^{commit}`,
  ]).then(
    (out) => out.trim(),
    async () => {
      throw new GitRefError(await missingRefMessage(top, ref));
    },
  );
  const inRepo = relative(top, dir).split(sep).join('/');
  const empty: Catalog = { root: dir, events: [], consumers: [] };
  const listed = await git(top, [
    'ls-tree',
    '-d',
    '--name-only',
    commit,
    '--',
    inRepo === '' ? '.' : inRepo,
  ]);
  if (inRepo !== '' && listed.trim() === '') return empty;

  const temp = await mkdtemp(join(tmpdir(), 'evgen-against-'));
  try {
    await extractTree(top, commit, inRepo === '' ? '.' : inRepo, temp);
    const catalog = await loadCatalog(
      join(temp, ...(inRepo === '' ? [] : inRepo.split('/'))),
      options,
    );
    // Report paths as the working tree's, not the temporary copy's.
    return { ...catalog, root: dir };
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
}
