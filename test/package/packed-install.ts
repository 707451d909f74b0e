/**
 * evgen as a service installs it today: the two release packages are packed by the repository's
 * own `npm run release:pack` (from a copy of the repository), and a scratch service next to them
 * runs the README's install lines against the npm registry. Everything lives in one temp folder
 * outside the repository; `remove()` deletes it.
 */
import { execFile } from 'node:child_process';
import {
  cp,
  mkdir,
  mkdtemp,
  readFile,
  readdir,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

/** Folder names the README's install lines use, relative to the service. */
export const PACKAGES_DIR = 'evgen-packages';

export interface PackageJson {
  readonly name: string;
  readonly version: string;
  readonly files: readonly string[];
  readonly bin?: Readonly<Record<string, string>>;
  readonly scripts?: Readonly<Record<string, string>>;
  readonly exports: Readonly<Record<string, { readonly types: string; readonly default: string }>>;
  readonly dependencies?: Readonly<Record<string, string>>;
  readonly devDependencies?: Readonly<Record<string, string>>;
  readonly peerDependencies?: Readonly<Record<string, string>>;
  readonly peerDependenciesMeta?: Readonly<Record<string, { readonly optional?: boolean }>>;
}

export async function readPackageJson(dir = REPO): Promise<PackageJson> {
  return JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as PackageJson;
}

/** Paths `npm pack --dry-run` would put in the tarball (no scripts run, nothing written). */
export async function packedFileList(cwd: string): Promise<string[]> {
  const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd });
  const [report] = JSON.parse(stdout) as { files: { path: string }[] }[];
  if (report === undefined) throw new Error(`npm pack --dry-run printed no report in ${cwd}`);
  return report.files.map((file) => file.path).sort();
}

/** Runs a command; on failure the error names the command with its stdout and stderr. */
export async function exec(
  file: string,
  args: readonly string[],
  cwd: string,
  env: Readonly<Record<string, string>> = {},
): Promise<{ stdout: string; stderr: string }> {
  try {
    return await run(file, [...args], {
      cwd,
      maxBuffer: 16 * 1024 * 1024,
      env: { ...process.env, ...env },
    });
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    throw new Error(
      `${file} ${args.join(' ')} exited ${String(failed.code)}\n${failed.stdout ?? ''}\n${failed.stderr ?? ''}`,
      { cause: error },
    );
  }
}

/** The shell lines of the README's fenced block that follows `heading`, comments removed. */
export async function readmeLines(heading: string): Promise<string[]> {
  const readme = await readFile(join(REPO, 'README.md'), 'utf8');
  const at = readme.indexOf(`\n${heading}\n`);
  if (at < 0) throw new Error(`README has no heading '${heading}'`);
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(at));
  if (block === null) throw new Error(`README has no sh block after '${heading}'`);
  return block[1]!
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

export interface ServiceWorkspace {
  /** The temp folder holding `evgen/` (a copy of the repository), `evgen-packages/`, `my-service/`. */
  readonly root: string;
  readonly packages: string;
  /** The scratch service (its package.json says "type": "module"). */
  readonly app: string;
  remove(): Promise<void>;
}

/**
 * Copies what a clone holds (sources, templates, package files, README, docs, .ci) next to an empty
 * service, with the repository's node_modules standing in for `npm ci`.
 */
export async function createServiceWorkspace(): Promise<ServiceWorkspace> {
  const root = await mkdtemp(join(tmpdir(), 'evgen-package-'));
  try {
    const clone = join(root, 'evgen');
    await mkdir(clone);
    for (const entry of [
      '.ci',
      'README.md',
      'docs',
      'package.json',
      'src',
      'templates',
      'tsconfig.build.json',
      'tsconfig.json',
    ]) {
      await cp(join(REPO, entry), join(clone, entry), { recursive: true });
    }
    await symlink(join(REPO, 'node_modules'), join(clone, 'node_modules'), 'dir');
    const app = join(root, 'my-service');
    await mkdir(app);
    await writeFile(
      join(app, 'package.json'),
      `${JSON.stringify({ name: 'service', version: '1.0.0', private: true, type: 'module' }, null, 2)}\n`,
    );
    return {
      root,
      packages: join(root, PACKAGES_DIR),
      app,
      remove: () => rm(root, { recursive: true, force: true }),
    };
  } catch (error) {
    await rm(root, { recursive: true, force: true });
    throw error;
  }
}

/** Bytes of every file under `dir` (symlinks not followed). */
export async function folderSize(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += await folderSize(path);
    else if (entry.isFile()) total += (await stat(path)).size;
  }
  return total;
}
