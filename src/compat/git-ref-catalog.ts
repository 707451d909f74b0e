/**
 * The catalog as it was at a git ref, for `evgen check --against <ref>`: the ref's copy of the
 * events folder is extracted into a temporary folder (`git archive | tar -x`), loaded with the
 * same loader as the working tree, and the temporary folder is removed again.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
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

async function git(cwd: string, args: readonly string[]): Promise<string> {
  const { stdout } = await run('git', [...args], { cwd, maxBuffer: 256 * 1024 * 1024 });
  return stdout;
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
    () => {
      throw new GitRefError(
        `git ref "${ref}" does not exist (try a branch, tag or commit, e.g. origin/main)`,
      );
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
    const archive = join(temp, 'events.tar');
    await git(top, [
      'archive',
      '--format=tar',
      '-o',
      archive,
      commit,
      '--',
      inRepo === '' ? '.' : inRepo,
    ]);
    await run('tar', ['-xf', archive, '-C', temp]);
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
