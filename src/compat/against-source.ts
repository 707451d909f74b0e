/**
 * What `evgen check --against` accepts, as buf's `--against` does: a local git ref (`origin/main`),
 * a remote git repository (`https://…/orders.git#main`, `file:///…/repo.git`,
 * `git@host:org/repo.git#v1.2.0`), a tarball (`./catalog-1.2.0.tgz`, e.g. what `npm pack`
 * wrote) or a published catalog package version (`npm:@acme/orders-catalog@1.2.0`, fetched with
 * npm's own client, so its registry, cache and auth settings apply).
 *
 * After `#`, options separated by commas: `ref=<ref>` (or a bare ref, for git), `subdir=<folder>`
 * (where the events folder is inside the repository or tarball). Defaults: for git, the events
 * folder at the same path as in this repository; for a tarball, the catalog of the package it
 * holds (`package/`, per its package.json), else its `events/` folder, else its top.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { promisify } from 'node:util';
import { packageCatalogDir } from '../catalog/catalog-dependencies.js';
import { loadCatalog, type LoadCatalogOptions } from '../catalog/load-catalog.js';
import type { Catalog } from '../catalog/model.js';
import { displayPath } from '../catalog/read-json-file.js';
import { extractTree, git, GitRefError, loadCatalogAtRef } from './git-ref-catalog.js';

const run = promisify(execFile);

export type AgainstKind = 'git-ref' | 'git-remote' | 'tarball' | 'package';

export interface AgainstSource {
  readonly kind: AgainstKind;
  /** The ref, URL, file or package spec, without the `#…` options. */
  readonly location: string;
  readonly ref: string | undefined;
  readonly subdir: string | undefined;
}

const TARBALL = /\.(tgz|tar\.gz|tar)$/i;
const REMOTE_GIT = /^(https?|ssh|git|file):\/\/|^[\w.-]+@[\w.-]+:|\.git$/;

/** Reads an `--against` value. */
export function parseAgainst(spec: string): AgainstSource {
  const hash = spec.indexOf('#');
  const location = hash < 0 ? spec : spec.slice(0, hash);
  let ref: string | undefined;
  let subdir: string | undefined;
  if (hash >= 0) {
    for (const part of spec.slice(hash + 1).split(',')) {
      const [key, value] = part.includes('=') ? part.split('=', 2) : ['ref', part];
      if (key === 'ref' || key === 'branch' || key === 'tag') ref = value;
      else if (key === 'subdir') subdir = value;
      else throw new GitRefError(`unknown --against option "${key ?? part}" (use ref=, subdir=)`);
    }
  }
  if (subdir !== undefined && (isAbsolute(subdir) || subdir.split(/[\\/]/).includes('..')))
    throw new GitRefError(`subdir "${subdir}" must be a folder inside the source`);
  const kind: AgainstKind = location.startsWith('npm:')
    ? 'package'
    : REMOTE_GIT.test(location)
      ? 'git-remote'
      : TARBALL.test(location)
        ? 'tarball'
        : 'git-ref';
  return { kind, location: kind === 'package' ? location.slice(4) : location, ref, subdir };
}

/** Loads the released catalog an `--against` value names. */
export async function loadCatalogAgainst(
  eventsDir: string,
  spec: string,
  options: LoadCatalogOptions = {},
): Promise<Catalog> {
  const source = parseAgainst(spec);
  if (source.kind === 'git-ref') return loadCatalogAtRef(eventsDir, spec, options);
  const temp = await mkdtemp(join(tmpdir(), 'evgen-against-'));
  try {
    const dir =
      source.kind === 'git-remote'
        ? await fetchRemote(eventsDir, source, temp)
        : await unpack(
            source.kind === 'package'
              ? await packPackage(source.location, temp)
              : resolve(source.location),
            source.subdir,
            temp,
          );
    if (!existsSync(dir)) return { root: resolve(eventsDir), events: [], consumers: [] };
    const catalog = await loadCatalog(dir, options);
    // Report paths as the working tree's, not the temporary copy's.
    return { ...catalog, root: resolve(eventsDir) };
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
}

/** The events folder's path inside its git repository; `events` outside one. */
async function pathInRepository(eventsDir: string): Promise<string> {
  try {
    const dir = await realpath(eventsDir);
    const top = await realpath((await git(dir, ['rev-parse', '--show-toplevel'])).trim());
    const inRepo = relative(top, dir).split(sep).join('/');
    return inRepo === '' ? '.' : inRepo;
  } catch {
    return 'events';
  }
}

/** Fetches one commit of a remote repository (shallow, into a bare temporary repository). */
async function fetchRemote(eventsDir: string, source: AgainstSource, temp: string) {
  const bare = join(temp, 'repo.git');
  const target = join(temp, 'tree');
  await git(temp, ['init', '--quiet', '--bare', bare]);
  const ref = source.ref ?? 'HEAD';
  if (ref.startsWith('-') || source.location.startsWith('-'))
    throw new GitRefError(`"${source.location}#${ref}" is not a git repository and ref`);
  try {
    // No prompt for credentials (a CI job would hang: askPass answers empty at once), no ext::
    // transport; a private remote fails with git's message.
    await git(bare, [
      '-c',
      'protocol.ext.allow=never',
      '-c',
      'core.askPass=true',
      'fetch',
      '--quiet',
      '--depth=1',
      '--no-tags',
      '--',
      source.location,
      ref,
    ]);
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? String(error);
    throw new GitRefError(
      `cannot fetch ${ref} from ${source.location}: ${stderr.trim().split('\n').at(-1) ?? ''}`,
    );
  }
  const commit = (await git(bare, ['rev-parse', '--verify', 'FETCH_HEAD^{commit}'])).trim();
  const path = source.subdir ?? (await pathInRepository(eventsDir));
  await extractTree(bare, commit, path, target);
  return path === '.' ? target : join(target, ...path.split('/'));
}

/** `npm pack <spec>` into the temporary folder; returns the tarball. */
async function packPackage(spec: string, temp: string): Promise<string> {
  if (spec.startsWith('-')) throw new GitRefError(`"${spec}" is not a package spec`);
  try {
    const { stdout } = await run(
      'npm',
      ['pack', '--json', '--ignore-scripts', '--pack-destination', temp, '--', spec],
      { cwd: temp, maxBuffer: 64 * 1024 * 1024 },
    );
    const [packed] = JSON.parse(stdout) as { filename: string }[];
    return join(temp, packed!.filename);
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? String(error);
    throw new GitRefError(
      `cannot fetch catalog package ${spec} with npm pack: ${stderr.trim().split('\n').at(-1) ?? ''}`,
    );
  }
}

/** Extracts a tarball and returns its events folder. */
async function unpack(tarball: string, subdir: string | undefined, temp: string) {
  if (!existsSync(tarball)) throw new GitRefError(`tarball ${displayPath(tarball)} does not exist`);
  const target = join(temp, 'unpacked');
  await mkdir(target, { recursive: true });
  try {
    // GNU and BSD tar both refuse members outside the target (absolute or `..` paths).
    await run('tar', ['-xf', tarball, '-C', target]);
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? String(error);
    throw new GitRefError(`cannot unpack ${displayPath(tarball)}: ${stderr.trim()}`);
  }
  if (subdir !== undefined) return join(target, ...subdir.split('/'));
  const packageDir = join(target, 'package');
  if (existsSync(join(packageDir, 'package.json')))
    return packageCatalogDir(packageDir, `${displayPath(tarball)}: package/package.json`);
  return existsSync(join(target, 'events')) ? join(target, 'events') : target;
}
