/**
 * evgen as a service installs it: the package is compiled and packed like a release (`npm pack`
 * honours package.json `files`), the tarball is unpacked into a scratch service's
 * node_modules/evgen, and evgen's own dependencies are linked beside it from this repository's
 * node_modules (no registry needed). Everything lives in one temp folder outside the repository;
 * `remove()` deletes it.
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

export interface PackageJson {
  readonly name: string;
  readonly version: string;
  readonly files: readonly string[];
  readonly bin: Readonly<Record<string, string>>;
  readonly exports: Readonly<Record<string, { readonly types: string; readonly default: string }>>;
  readonly dependencies: Readonly<Record<string, string>>;
  readonly devDependencies: Readonly<Record<string, string>>;
}

export async function readPackageJson(): Promise<PackageJson> {
  return JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8')) as PackageJson;
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
): Promise<{ stdout: string; stderr: string }> {
  try {
    return await run(file, [...args], { cwd, maxBuffer: 16 * 1024 * 1024 });
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    throw new Error(
      `${file} ${args.join(' ')} exited ${String(failed.code)}\n${failed.stdout ?? ''}\n${failed.stderr ?? ''}`,
    );
  }
}

export interface PackedInstall {
  /** The scratch service (its package.json says "type": "module"). */
  readonly app: string;
  /** node_modules/evgen inside it, exactly the tarball's content. */
  readonly installed: string;
  /** Paths inside the tarball, sorted. */
  readonly files: readonly string[];
  remove(): Promise<void>;
}

/**
 * Compiles the sources (what `prepare` does) into a staging copy of the package, packs it and
 * installs the tarball into a fresh service folder.
 */
export async function packAndInstall(): Promise<PackedInstall> {
  const root = await mkdtemp(join(tmpdir(), 'evgen-package-'));
  try {
    const pkg = await readPackageJson();
    const stage = join(root, 'stage');
    await mkdir(stage);
    // The staging copy is what `prepare` sees in a clone (sources, tsconfigs, package.json,
    // README and every `files` entry); dist/ is compiled there fresh, so a stale or missing
    // dist/ in the repository cannot hide a problem and source maps point where they would.
    const entries = new Set([
      'package.json',
      'README.md',
      'tsconfig.json',
      'tsconfig.build.json',
      'src',
      ...pkg.files,
    ]);
    entries.delete('dist');
    for (const entry of [...entries].sort()) {
      await cp(join(REPO, entry), join(stage, entry), { recursive: true });
    }
    await symlink(join(REPO, 'node_modules'), join(stage, 'node_modules'), 'dir');
    const tsc = join(REPO, 'node_modules/typescript/bin/tsc');
    await exec(process.execPath, [tsc, '-p', 'tsconfig.build.json'], stage);
    const { stdout } = await exec(
      'npm',
      ['pack', '--json', '--ignore-scripts', '--pack-destination', root],
      stage,
    );
    const [report] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
    if (report === undefined) throw new Error('npm pack printed no report');

    const app = join(root, 'service');
    const installed = join(app, 'node_modules', pkg.name);
    await mkdir(installed, { recursive: true });
    await exec(
      'tar',
      ['-xzf', join(root, report.filename), '-C', installed, '--strip-components=1'],
      root,
    );
    // What `npm install` would add: evgen's dependencies, plus the types a TypeScript service has.
    const linked = [...Object.keys(pkg.dependencies), '@types/node', '@types/pg'];
    for (const name of linked) {
      const target = join(app, 'node_modules', name);
      await mkdir(dirname(target), { recursive: true });
      await symlink(join(REPO, 'node_modules', name), target, 'dir');
    }
    // Generated code imports `evgen-runtime`: until it is packed on its own, expose the
    // generator package's compiled runtime under that name.
    const runtime = join(app, 'node_modules', 'evgen-runtime');
    await cp(join(installed, 'dist/runtime'), runtime, { recursive: true });
    await writeFile(
      join(runtime, 'package.json'),
      JSON.stringify({
        name: 'evgen-runtime',
        type: 'module',
        exports: { '.': { types: './index.d.ts', default: './index.js' } },
      }),
    );
    await writeFile(
      join(app, 'package.json'),
      `${JSON.stringify({ name: 'service', private: true, type: 'module' }, null, 2)}\n`,
    );
    return {
      app,
      installed,
      files: report.files.map((file) => file.path).sort(),
      remove: () => rm(root, { recursive: true, force: true }),
    };
  } catch (error) {
    await rm(root, { recursive: true, force: true });
    throw error;
  }
}
