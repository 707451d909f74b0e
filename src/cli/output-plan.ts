/**
 * Compares generated files with the output folder and applies the difference safely.
 *
 * Files are compared one by one as the generator yields them; a new or changed file waits in a
 * staging folder beside the output folder, so only paths and hashes stay in memory. The whole
 * plan is known before the output folder is touched: applying it renames each staged file over
 * the old one (atomic on POSIX), then deletes orphans; a failed build removes the staging folder
 * and leaves the output folder as it was. An orphan is a file in the output folder that evgen no longer generates AND
 * that starts with evgen's header; any other file is kept and reported, never deleted.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, type Dirent } from 'node:fs';
import {
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  rm,
  lstat,
  rmdir,
  writeFile,
} from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { displayPath } from '../catalog/read-json-file.js';
// Only files starting with one of evgen's headers (GENERATED_MARKERS) are ever deleted.
import { GENERATED_MARKER, GENERATED_MARKERS } from '../codegen/render/header.js';
import type { GeneratedFile } from '../codegen/target.js';
import { compareStrings } from '../common/json-value.js';
import { contentHash, sha256 } from '../common/sha256.js';
import { DiagnosticError } from '../diagnostics/diagnostic-error.js';

export interface PlannedWrite {
  readonly path: string;
  /** `missing`: not on disk yet; `stale`: on disk with other content. */
  readonly reason: 'missing' | 'stale';
  /** Where the new content waits (a build), absolute. */
  readonly staged?: string;
  /** New and current content of a stale file when nothing is staged (for --check diffs). */
  readonly content?: string;
  readonly current?: string;
}

export interface OutputPlan {
  /** Absolute output folder. */
  readonly outDir: string;
  readonly writes: readonly PlannedWrite[];
  readonly unchanged: readonly string[];
  /** Orphans carrying evgen's header: deleted by `applyPlan`. */
  readonly removals: readonly string[];
  /** Files in the output folder that evgen did not generate and will not delete. */
  readonly foreign: readonly string[];
  /** Path → sha256 of every generated file. */
  readonly hashes: Readonly<Record<string, string>>;
  /** The staging folder to remove once the plan is applied or dropped. */
  readonly stagingDir?: string;
}

/**
 * A generated path cannot be written (a folder, file, link or hand-written file is in the way):
 * code `output-conflict` at the path in the way. Nothing was touched.
 */
export class OutputConflictError extends DiagnosticError {
  constructor(file: string, message: string, hint: string) {
    super([{ file, pointer: '', code: 'output-conflict', message, hint }]);
    this.name = 'OutputConflictError';
  }
}

/** Folders never scanned for orphans, even when the output folder contains them. */
const SKIPPED_DIRS = new Set(['node_modules']);

/**
 * Builds an output plan file by file. With `stage`, each new or changed file is written to a
 * staging folder beside the output folder (created on first use, named after it); otherwise
 * (`--check`) only stale files keep their new and current content, for the diff. Call
 * `discard()` when the build fails: the staging folder goes, the output folder was not touched.
 */
export class OutputPlanner {
  readonly #writes: PlannedWrite[] = [];
  readonly #unchanged: string[] = [];
  readonly #hashes: Record<string, string> = {};
  /** Output subfolders known to be real folders (true) or absent (false), for assertWritable. */
  readonly #folders = new Map<string, boolean>();
  /** Staging subfolders already created. */
  readonly #staged = new Set<string>();
  #stagingDir: string | undefined;

  private constructor(
    readonly outDir: string,
    private readonly existing: ReadonlySet<string>,
    private readonly stage: boolean,
  ) {}

  static async open(outDir: string, options: { stage: boolean }): Promise<OutputPlanner> {
    return new OutputPlanner(outDir, new Set(await listFiles(outDir)), options.stage);
  }

  async add(file: GeneratedFile): Promise<void> {
    const hash = contentHash(file);
    this.#hashes[file.path] = hash;
    if (!this.existing.has(file.path)) {
      await assertWritable(this.outDir, file.path, this.#folders);
      this.#writes.push({
        path: file.path,
        reason: 'missing',
        ...(this.stage ? { staged: await this.#stageFile(file) } : {}),
      });
      return;
    }
    // Synchronous: for hundreds of small files fs/promises' readFile costs over twice the CPU.
    const current = readFileSync(join(this.outDir, file.path), 'utf8');
    if (current === file.content) this.#unchanged.push(file.path);
    else if (!hasMarker(current))
      // A hand-written index.ts or catalog.ts is the user's: never replace it.
      throw new OutputConflictError(
        displayPath(join(this.outDir, file.path)),
        `refusing to overwrite ${file.path}: it does not start with evgen's "${GENERATED_MARKER}" header (a hand-written file?)`,
        'move it away or choose another --out',
      );
    else
      this.#writes.push({
        path: file.path,
        reason: 'stale',
        ...(this.stage
          ? { staged: await this.#stageFile(file) }
          : { content: file.content, current }),
      });
  }

  /** The plan: writes and unchanged files sorted by path, orphans and foreign files found. */
  async finish(): Promise<OutputPlan> {
    const removals: string[] = [];
    const foreign: string[] = [];
    for (const path of this.existing) {
      if (Object.hasOwn(this.#hashes, path)) continue;
      if (await startsWithMarker(join(this.outDir, path))) removals.push(path);
      else foreign.push(path);
    }
    const byPath = (a: string, b: string) => compareStrings(a, b);
    return {
      outDir: this.outDir,
      writes: this.#writes.sort((a, b) => byPath(a.path, b.path)),
      unchanged: this.#unchanged.sort(byPath),
      removals,
      foreign,
      hashes: Object.fromEntries(
        Object.entries(this.#hashes).sort(([a], [b]) => compareStrings(a, b)),
      ),
      ...(this.#stagingDir !== undefined ? { stagingDir: this.#stagingDir } : {}),
    };
  }

  /** Removes what was staged (the build failed or only checked). */
  async discard(): Promise<void> {
    if (this.#stagingDir !== undefined)
      await rm(this.#stagingDir, { recursive: true, force: true });
  }

  async #stageFile(file: GeneratedFile): Promise<string> {
    if (this.#stagingDir === undefined) {
      const name = `.${basename(this.outDir)}.evgen-staging-${process.pid}-${randomBytes(4).toString('hex')}`;
      this.#stagingDir = join(dirname(this.outDir), name);
      await mkdir(this.#stagingDir);
    }
    const staged = join(this.#stagingDir, file.path);
    if (!this.#staged.has(dirname(staged))) {
      await mkdir(dirname(staged), { recursive: true });
      this.#staged.add(dirname(staged));
    }
    await writeFile(staged, file.content, { encoding: 'utf8', flag: 'wx' });
    return staged;
  }
}

/**
 * Whether the output folder holds exactly the files whose hashes are given (path → sha256), with
 * no evgen-generated orphan beside them, read without generating anything. Files evgen did not
 * generate are listed in `foreign`, as in a full plan.
 */
export async function outputMatches(
  outDir: string,
  hashes: Readonly<Record<string, string>>,
): Promise<{ matches: boolean; files: number; foreign: string[] }> {
  const existing = await listFiles(outDir);
  const existingSet = new Set(existing);
  const wanted = Object.keys(hashes);
  const foreign: string[] = [];
  let matches = wanted.every((path) => existingSet.has(path));
  for (const path of existing) {
    if (Object.hasOwn(hashes, path)) {
      if (matches && sha256(readFileSync(join(outDir, path), 'utf8')) !== hashes[path])
        matches = false;
    } else if (await startsWithMarker(join(outDir, path))) matches = false;
    else foreign.push(path);
  }
  return { matches, files: wanted.length, foreign };
}

/** True when `--check` should fail. */
export function isOutOfDate(plan: OutputPlan): boolean {
  return plan.writes.length > 0 || plan.removals.length > 0;
}

export async function applyPlan(plan: OutputPlan): Promise<void> {
  const made = new Set<string>();
  try {
    for (const write of plan.writes) {
      const target = join(plan.outDir, write.path);
      if (!made.has(dirname(target))) {
        await mkdir(dirname(target), { recursive: true });
        made.add(dirname(target));
      }
      if (write.staged !== undefined) await moveInto(write.staged, target);
      else await replaceFile(target, write.content ?? '');
    }
    for (const path of plan.removals) {
      await rm(join(plan.outDir, path), { force: true });
      await removeEmptyParents(plan.outDir, dirname(path));
    }
  } finally {
    if (plan.stagingDir !== undefined) await rm(plan.stagingDir, { recursive: true, force: true });
  }
}

/**
 * Renames a staged file over its target; across file systems (an output folder that is a link
 * to another disk) it is copied to a temporary name beside the target and renamed from there.
 */
async function moveInto(staged: string, target: string): Promise<void> {
  try {
    await rename(staged, target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
    await replaceFile(target, await readFile(staged, 'utf8'));
  }
}

/** Writes to a temporary name in the target's folder and renames it over the target. */
async function replaceFile(target: string, content: string): Promise<void> {
  const temporary = `${target}.evgen-${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(temporary, content, { encoding: 'utf8', flag: 'wx' });
    await rename(temporary, target);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

/** Every regular file under `dir`, relative and `/`-separated, sorted; [] when `dir` does not exist. */
async function listFiles(dir: string, prefix = ''): Promise<string[]> {
  let entries: Dirent[];
  try {
    entries = await readdir(join(dir, prefix), { withFileTypes: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && prefix === '') return [];
    if (code === 'ENOTDIR' && prefix === '')
      throw new OutputConflictError(
        displayPath(dir),
        `the output folder ${displayPath(dir)} is a file, not a folder`,
        'remove it or choose another --out',
      );
    throw error;
  }
  const files: string[] = [];
  for (const entry of entries.sort((a, b) => compareStrings(a.name, b.name))) {
    const relativePath = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    if (entry.isDirectory()) {
      if (!entry.name.startsWith('.') && !SKIPPED_DIRS.has(entry.name))
        files.push(...(await listFiles(dir, relativePath)));
    } else if (entry.isFile()) {
      files.push(relativePath);
    }
  }
  return files;
}

/**
 * A generated file cannot go where a folder (or, for its parents, a file) already is, nor through
 * a symbolic link: a link inside the output folder could point anywhere, so evgen never writes
 * through one (the output folder itself may be a link; that is the user's choice).
 */
async function assertWritable(
  outDir: string,
  path: string,
  folders: Map<string, boolean>,
): Promise<void> {
  const segments = path.split('/');
  for (let index = 1; index <= segments.length; index++) {
    const isLast = index === segments.length;
    const prefix = segments.slice(0, index).join('/');
    // Parent folders already checked for an earlier file (true: a real folder, false: absent).
    const known = isLast ? undefined : folders.get(prefix);
    if (known === false) return;
    if (known === true) continue;
    const at = join(outDir, prefix);
    const found = await lstat(at).catch(() => undefined);
    if (found === undefined) {
      if (!isLast) folders.set(prefix, false);
      return;
    }
    if (found.isSymbolicLink())
      throw new OutputConflictError(
        displayPath(at),
        `cannot write ${path}: ${join(...segments.slice(0, index))} is a symbolic link; evgen never writes through links in the output folder`,
        'replace it with a real folder or remove it',
      );
    if (isLast ? found.isDirectory() : !found.isDirectory()) {
      throw new OutputConflictError(
        displayPath(at),
        `cannot write ${path}: ${join(...segments.slice(0, index))} is in the way (a ${found.isDirectory() ? 'folder' : 'file'})`,
        'move it away or choose another --out',
      );
    }
    if (!isLast) folders.set(prefix, true);
  }
}

/**
 * Whether `text` starts with an evgen header line, matched exactly: a marker, a space, the rest
 * of the header ending in `. DO NOT EDIT.`, then LF. A file that merely starts like one (`// Code
 * generated by evgenius`, a BOM or a CR before the newline) is someone else's and never touched.
 */
function hasMarker(text: string): boolean {
  const end = text.indexOf('\n');
  if (end < 0) return false;
  const line = text.slice(0, end);
  return (
    GENERATED_MARKERS.some((marker) => line.startsWith(`${marker} `)) &&
    line.endsWith('. DO NOT EDIT.') &&
    !line.includes('\r')
  );
}

/** A header line longer than this (a catalog of tens of thousands of files) is not evgen's. */
const MAX_HEADER_BYTES = 4 * 1024 * 1024;

async function startsWithMarker(path: string): Promise<boolean> {
  const handle = await open(path, 'r');
  try {
    // The header lists every source file, so read until its newline, not a fixed prefix.
    const chunks: Buffer[] = [];
    let length = 0;
    while (length < MAX_HEADER_BYTES) {
      const buffer = Buffer.alloc(length === 0 ? 4096 : 65536);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, length);
      if (bytesRead === 0) break;
      const chunk = buffer.subarray(0, bytesRead);
      chunks.push(chunk);
      length += bytesRead;
      if (chunk.includes(0x0a)) break;
    }
    return hasMarker(Buffer.concat(chunks).toString('utf8'));
  } finally {
    await handle.close();
  }
}

async function removeEmptyParents(outDir: string, relativeDir: string): Promise<void> {
  let current = relativeDir;
  while (current !== '.' && current !== '') {
    try {
      await rmdir(join(outDir, current)); // fails (and stops) when the folder is not empty
    } catch {
      return;
    }
    current = dirname(current);
  }
}
