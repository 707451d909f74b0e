/**
 * Where the build cache lives and what makes its entries trustworthy. The cache lets `check` and
 * `build --check` skip work, so it must never be something a pull request (or another local user)
 * can write:
 *
 * - by default it lives in a per-user folder outside every checkout
 *   (`$XDG_CACHE_HOME/evgen/build-cache`, else `~/.cache/evgen/build-cache`), one subfolder per
 *   checkout (keyed by the checkout's absolute path), never in the work tree or a shared folder;
 * - every entry is sealed with an HMAC under a per-user secret kept in that folder (mode 0600),
 *   so an entry committed to a repository, copied from another machine or planted by another
 *   user reads as a miss wherever the cache folder is (an explicit `--cache-dir` included);
 * - a folder that is not owned by this user, is writable by group or others, is a symbolic link,
 *   or (for the secret's folder) lies inside the checkout being judged is refused, and the
 *   command runs without a cache.
 */
import { randomBytes } from 'node:crypto';
import {
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { sha256 } from '../common/sha256.js';

/** Why a cache folder (or its secret) cannot be trusted; the message is one line. */
export class CacheRefused extends Error {}

/** The per-user folder of evgen's build caches. */
export function userCacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CACHE_HOME;
  const base = xdg !== undefined && isAbsolute(xdg) ? xdg : join(homedir(), '.cache');
  return join(base, 'evgen', 'build-cache');
}

/**
 * Throws CacheRefused unless `path` is a real folder (not a link), owned by this user and
 * writable by nobody else: only then can no other user add, swap or redirect what is in it.
 */
export function assertPrivateFolder(path: string): void {
  const stats = lstatSync(path, { throwIfNoEntry: false });
  if (stats === undefined) throw new CacheRefused(`${path} does not exist`);
  if (stats.isSymbolicLink()) throw new CacheRefused(`${path} is a symbolic link`);
  if (!stats.isDirectory()) throw new CacheRefused(`${path} is not a folder`);
  const uid = process.getuid?.();
  if (uid !== undefined && stats.uid !== uid)
    throw new CacheRefused(`${path} belongs to another user (uid ${stats.uid})`);
  if ((stats.mode & 0o022) !== 0)
    throw new CacheRefused(`${path} is writable by other users (chmod go-w to use it)`);
}

/** Creates `path` (mode 0700, parents as needed) unless it exists, then asserts it is private. */
export function privateFolder(path: string): string {
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    mkdirSync(path, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST')
      throw new CacheRefused(`cannot create ${path}: ${(error as Error).message}`);
  }
  assertPrivateFolder(path);
  return path;
}

/** The git work tree holding `path` (the nearest folder above it with a `.git`), if any. */
function checkoutOf(path: string): string | undefined {
  for (let dir = resolve(path); ; dir = dirname(dir)) {
    if (existsSync(join(dir, '.git'))) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}

function isInside(child: string, parent: string): boolean {
  const path = relative(parent, child);
  return path === '' || (!path.startsWith('..') && !isAbsolute(path));
}

const SECRET_BYTES = 32;

/**
 * The per-user secret that seals cache entries: created once (random, mode 0600) in `root`,
 * which must be private and outside the checkout holding `eventsDir` (a secret a pull request
 * could commit would seal nothing).
 */
export function cacheSecret(root: string, eventsDir: string): Buffer {
  const checkout = checkoutOf(eventsDir);
  if (checkout !== undefined && isInside(resolve(root), checkout))
    throw new CacheRefused(`${root} lies inside the repository ${checkout}`);
  privateFolder(root);
  const path = join(root, 'secret');
  if (!existsSync(path)) {
    // Written whole under another name, then linked into place: a concurrent run either wins
    // or reads the winner's complete secret, never a half-written one.
    const temporary = `${path}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
    writeFileSync(temporary, randomBytes(SECRET_BYTES).toString('hex'), { mode: 0o600 });
    try {
      linkSync(temporary, path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      unlinkSync(temporary);
    }
  }
  const stats = lstatSync(path);
  const uid = process.getuid?.();
  if (!stats.isFile() || (uid !== undefined && stats.uid !== uid) || (stats.mode & 0o077) !== 0)
    throw new CacheRefused(`${path} is not a private file of this user (mode 0600)`);
  const secret = readFileSync(path, 'utf8');
  if (!/^[0-9a-f]{64}$/.test(secret)) throw new CacheRefused(`${path} is damaged; delete it`);
  return Buffer.from(secret, 'hex');
}

/**
 * The default cache folder of the checkout whose output folder sits in `checkout`: a private
 * subfolder of `root` named by a hash of the checkout's path. A new one first removes the
 * folders of checkouts that no longer exist, so the per-user cache does not grow with every
 * temporary checkout.
 */
export function checkoutCacheFolder(root: string, checkout: string): string {
  const projects = privateFolder(join(root, 'checkouts'));
  const folder = join(projects, sha256(resolve(checkout)).slice(0, 32));
  if (!existsSync(folder)) {
    for (const name of readdirSync(projects)) {
      let recorded: string;
      try {
        recorded = readFileSync(join(projects, name, 'checkout'), 'utf8');
      } catch {
        continue; // being created by another run
      }
      if (!existsSync(recorded)) rmSync(join(projects, name), { recursive: true, force: true });
    }
    privateFolder(folder);
    writeFileSync(join(folder, 'checkout'), resolve(checkout), { mode: 0o600 });
  }
  assertPrivateFolder(folder);
  return folder;
}
