/**
 * Resolves `$ref`s between catalog files and produces a self-contained ("bundled") schema.
 *
 * Rules (documented in docs/guides/catalog.md):
 * - A `$ref` is either local (`#/...`) or a relative path to a file inside the events folder,
 *   optionally followed by a `#/...` JSON pointer. URLs, absolute paths and paths escaping the
 *   folder are refused; nothing is ever fetched.
 * - Every referenced file is inlined once into the root's `definitions` (draft-07) or `$defs`
 *   (2020-12) under a name derived from its path (`_common/money.schema.json` → `_common.money`),
 *   and each reference is rewritten to a local pointer. `$id`s are dropped in the bundle.
 * - Recursion inside one schema through `#/definitions/x` is legal (trees, linked lists). A cycle
 *   of references through *files*, or a chain of `$ref`-only schemas that comes back to where it
 *   started (a reference to itself with nothing else), is an error: it has no finite type.
 * - A referenced file must speak the same dialect as the schema that uses it (or declare none).
 */
import { realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import type { JsonSchema } from './model.js';
import { resolvePointer } from '../common/json-pointer.js';
import { isObject } from '../common/json-value.js';
import type { ProblemList } from './problem-list.js';
import { definitionsKeyword, type Dialect } from './schema-dialect.js';
import type { SchemaFile, SchemaFiles } from './schema-files.js';
import { mapSchema, walkSchema, type SchemaObject } from '../schema/walk.js';

/** One `$ref` as written, with where it points once resolved. */
interface Reference {
  /** Pointer of the `$ref` keyword in its file. */
  readonly pointer: string;
  readonly ref: string;
  /** Absolute path of the target file (the same file for local refs). */
  readonly targetFile: string;
  /** Fragment as written (`/definitions/a`, or '' for the whole document). */
  readonly fragment: string;
}

/** Keys a schema may have next to `$ref` and still be "only a reference". */
const ANNOTATIONS_ONLY = new Set([
  '$ref',
  '$comment',
  'title',
  'description',
  'examples',
  'deprecated',
]);

export interface BundleContext {
  /** Absolute path of the events folder; references must stay inside it. */
  readonly catalogRoot: string;
  readonly files: SchemaFiles;
  readonly problems: ProblemList;
  /** Called with every other file a successful bundle inlined. */
  readonly onInlined?: (file: SchemaFile) => void;
}

/**
 * Bundles the schema in `rootFile`. Returns undefined when a reference is broken (problems
 * recorded); the caller then skips checks that need the bundle.
 */
export async function bundleSchema(
  rootFile: SchemaFile,
  dialect: Dialect,
  context: BundleContext,
): Promise<JsonSchema | undefined> {
  const before = context.problems.size;
  const references = new Map<string, Reference[]>();
  const loaded = new Map<string, SchemaFile>([[rootFile.absolutePath, rootFile]]);

  // Depth-first over the file graph; `path` holds the chain of files for cycle reports.
  const visit = async (file: SchemaFile, path: readonly SchemaFile[]): Promise<void> => {
    if (references.has(file.absolutePath)) return;
    const refs = collectReferences(file, context);
    references.set(file.absolutePath, refs);
    for (const reference of refs) {
      if (reference.targetFile === file.absolutePath) {
        checkFragment(file, reference, file, context);
        continue;
      }
      const inChain = path.findIndex((step) => step.absolutePath === reference.targetFile);
      if (inChain >= 0 || reference.targetFile === file.absolutePath) {
        const chain = [...path.slice(inChain), file].map((step) =>
          catalogPath(step.absolutePath, context.catalogRoot),
        );
        context.problems.add({
          code: 'ref-cycle',
          file: file.display,
          pointer: reference.pointer,
          message: `$ref cycle through files: ${[...chain, chain[0]].join(' → ')}`,
          hint: 'break the cycle: move the shared part into a definition inside one file, or into a third file',
        });
        continue;
      }
      const where = placeOf(reference.targetFile, context.files, context.catalogRoot);
      if (where === 'missing') {
        context.problems.add({
          code: 'ref-missing-file',
          file: file.display,
          pointer: reference.pointer,
          message: `$ref "${reference.ref}" points to ${catalogPath(reference.targetFile, context.catalogRoot)}, which does not exist`,
          hint: 'fix the relative path (it is resolved from the folder of this file)',
        });
        continue;
      }
      if (where === 'outside') {
        context.problems.add({
          code: 'ref-escapes-catalog',
          file: file.display,
          pointer: reference.pointer,
          message: `$ref "${reference.ref}" leads outside the events folder through a symbolic link`,
          hint: 'copy the shared schema into the events folder instead of linking to it',
        });
        continue;
      }
      const target = await context.files.load(reference.targetFile);
      if (target === undefined) continue; // its own problems are already recorded
      if (target.dialect !== undefined && target.dialect !== dialect) {
        context.problems.add({
          code: 'ref-dialect-mismatch',
          file: file.display,
          pointer: reference.pointer,
          message: `$ref "${reference.ref}" points to a ${target.dialect} schema from a ${dialect} schema`,
          hint: 'declare the same "$schema" in both files (or none in the shared file)',
        });
        continue;
      }
      if (!context.files.validate(target, dialect)) continue;
      checkFragment(file, reference, target, context);
      loaded.set(target.absolutePath, target);
      await visit(target, [...path, file]);
    }
  };
  await visit(rootFile, []);
  checkSelfReferences(references, loaded, context);
  if (context.problems.size > before) return undefined;
  for (const file of loaded.values()) if (file !== rootFile) context.onInlined?.(file);
  return inline(rootFile, dialect, references, loaded, context);
}

/** Every `$ref` in a file, classified; refused ones are reported and left out. */
function collectReferences(file: SchemaFile, context: BundleContext): Reference[] {
  const found: Reference[] = [];
  walkSchema(file.value, (node, position) => {
    const ref = node.$ref;
    if (ref === undefined) return;
    const at = `${position.pointer}/$ref`;
    const report = (code: string, message: string, hint: string) =>
      context.problems.add({ code, file: file.display, pointer: at, message, hint });
    if (typeof ref !== 'string') return; // the meta-schema check reports it
    const hash = ref.indexOf('#');
    const filePart = hash < 0 ? ref : ref.slice(0, hash);
    const fragment = hash < 0 ? '' : ref.slice(hash + 1);
    // `C:/x.json` and `C:\x.json` are Windows paths, not URLs with scheme "C".
    const drivePath = /^[A-Za-z]:([\\/]|$)/.test(filePart);
    if (!drivePath && (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(filePart) || filePart.startsWith('//'))) {
      report(
        'ref-url',
        `$ref "${ref}" points to a URL; evgen never fetches schemas`,
        'copy the schema into the events folder (e.g. events/_common/) and reference it by relative path',
      );
      return;
    }
    if (filePart.startsWith('/') || filePart.startsWith('\\') || /^[A-Za-z]:/.test(filePart)) {
      report(
        'ref-absolute',
        `$ref "${ref}" is an absolute path`,
        'use a path relative to this file, e.g. "../../_common/money.schema.json"',
      );
      return;
    }
    if (fragment !== '' && !fragment.startsWith('/')) {
      report(
        'ref-unsupported-fragment',
        `$ref "${ref}" uses an anchor; evgen supports JSON pointer fragments only`,
        'write the fragment as a JSON pointer, e.g. "#/definitions/name"',
      );
      return;
    }
    let decoded: string;
    try {
      decoded = decodeURIComponent(filePart);
    } catch {
      report(
        'ref-invalid',
        `$ref "${ref}" is not a valid URI reference`,
        'percent-encode special characters correctly',
      );
      return;
    }
    const targetFile =
      decoded === '' ? file.absolutePath : resolve(dirname(file.absolutePath), decoded);
    const inside = relative(context.catalogRoot, targetFile);
    if (inside === '' || inside.startsWith('..') || isAbsolute(inside)) {
      report(
        'ref-escapes-catalog',
        `$ref "${ref}" points outside the events folder`,
        'keep shared schemas inside the events folder, e.g. events/_common/, and reference them from there',
      );
      return;
    }
    found.push({ pointer: at, ref, targetFile, fragment });
  });
  return found;
}

function checkFragment(
  from: SchemaFile,
  reference: Reference,
  target: SchemaFile,
  context: BundleContext,
): void {
  if (resolvePointer(target.value, decodeFragment(reference.fragment)).found) return;
  context.problems.add({
    code: 'ref-unresolved',
    file: from.display,
    pointer: reference.pointer,
    message: `$ref "${reference.ref}" points to nothing: ${target.display} has no "#${reference.fragment}"`,
    hint: 'fix the JSON pointer after "#" so it names an existing schema',
  });
}

/**
 * Reports chains of `$ref`-only schemas that return to their start: `{ "$ref": "#/definitions/a" }`
 * inside `a`, or a → b → a. Validating such a schema would never terminate.
 */
function checkSelfReferences(
  references: ReadonlyMap<string, readonly Reference[]>,
  loaded: ReadonlyMap<string, SchemaFile>,
  context: BundleContext,
): void {
  const byLocation = new Map<string, Reference>();
  for (const [file, refs] of references) {
    for (const reference of refs)
      byLocation.set(`${file}#${reference.pointer.slice(0, -'/$ref'.length)}`, reference);
  }
  for (const [file, refs] of references) {
    const source = loaded.get(file);
    if (source === undefined) continue;
    for (const reference of refs) {
      const start = `${file}#${reference.pointer.slice(0, -'/$ref'.length)}`;
      const chain = [start];
      let current: Reference | undefined = reference;
      while (current !== undefined && chain.length <= 64) {
        const target = loaded.get(current.targetFile);
        if (target === undefined) break;
        const pointer = decodeFragment(current.fragment);
        const location = `${current.targetFile}#${pointer}`;
        if (location === start) {
          context.problems.add({
            code: 'ref-self',
            file: source.display,
            pointer: reference.pointer,
            message: `$ref chain comes back to itself with nothing else: ${[...chain, location].map((step) => shortLocation(step, file, context)).join(' → ')}`,
            hint: 'give the referenced schema real content (type, properties, …) or point the $ref elsewhere',
          });
          break;
        }
        if (chain.includes(location)) break; // a loop that does not include the start: reported from its members
        const node = resolvePointer(target.value, pointer);
        if (
          !node.found ||
          !isObject(node.value) ||
          !Object.keys(node.value).every((key) => ANNOTATIONS_ONLY.has(key))
        )
          break;
        chain.push(location);
        current = byLocation.get(location);
      }
    }
  }
}

/** The bundled copy: references rewritten to local pointers, referenced files inlined. */
function inline(
  rootFile: SchemaFile,
  dialect: Dialect,
  references: ReadonlyMap<string, readonly Reference[]>,
  loaded: ReadonlyMap<string, SchemaFile>,
  context: BundleContext,
): JsonSchema {
  const defsKey = definitionsKeyword(dialect);
  const rootValue = rootFile.value;
  const existing =
    isObject(rootValue) && isObject(rootValue[defsKey]) ? Object.keys(rootValue[defsKey]) : [];
  const taken = new Set(existing);
  const names = new Map<string, string>();
  const externals = [...loaded.keys()]
    .filter((file) => file !== rootFile.absolutePath)
    .sort((a, b) =>
      catalogPath(a, context.catalogRoot) < catalogPath(b, context.catalogRoot) ? -1 : 1,
    );
  for (const file of externals) {
    const base = catalogPath(file, context.catalogRoot)
      .replace(/(\.schema)?\.json$/, '')
      .replace(/\//g, '.')
      .replace(/[^A-Za-z0-9_.-]/g, '_');
    let name = base;
    for (let suffix = 2; taken.has(name); suffix++) name = `${base}-${suffix}`;
    taken.add(name);
    names.set(file, name);
  }

  const rewrite =
    (file: string) =>
    (node: SchemaObject, position: { readonly pointer: string; readonly parent: unknown }) => {
      const copy = { ...node };
      // The root (its pointer is built only for a reference: building one per node is costly).
      if (position.parent === undefined) {
        delete copy.$id;
        if (file !== rootFile.absolutePath) delete copy.$schema;
      }
      if (typeof copy.$ref === 'string') {
        const reference = references
          .get(file)
          ?.find((candidate) => candidate.pointer === `${position.pointer}/$ref`);
        if (reference !== undefined) {
          const name = names.get(reference.targetFile);
          copy.$ref =
            name === undefined
              ? `#${reference.fragment}`
              : `#/${defsKey}/${name}${reference.fragment}`;
        }
      }
      return copy;
    };

  const bundled = mapSchema(rootValue, rewrite(rootFile.absolutePath), { copyData: true });
  if (externals.length === 0 || !isObject(bundled)) return bundled as JsonSchema;
  const definitions: Record<string, unknown> = isObject(bundled[defsKey])
    ? { ...bundled[defsKey] }
    : {};
  for (const file of externals) {
    definitions[names.get(file)!] = mapSchema(loaded.get(file)!.value, rewrite(file), {
      copyData: true,
    });
  }
  return { ...bundled, [defsKey]: definitions };
}

/**
 * Whether a referenced file exists and stays inside the events folder, asked once per file and
 * catalog load (keyed by the load's SchemaFiles): every version of a catalog references the same
 * shared files, and a stat and two realpaths per reference were a tenth of a cold check.
 */
const places = new WeakMap<SchemaFiles, Map<string, FilePlace>>();

type FilePlace = 'missing' | 'outside' | 'inside';

export function placeOf(file: string, files: SchemaFiles, catalogRoot: string): FilePlace {
  let known = places.get(files);
  if (known === undefined) places.set(files, (known = new Map<string, FilePlace>()));
  let place = known.get(file);
  if (place === undefined) {
    place = !isFile(file) ? 'missing' : staysInside(file, catalogRoot) ? 'inside' : 'outside';
    known.set(file, place);
  }
  return place;
}

/** Whether `path` is a file (following links); false when it does not exist or cannot be read. */
function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * True when the file, with symbolic links resolved, is still inside the (resolved) events folder.
 * Synchronous, like the loader's other file system calls (see sortedEntries).
 */
function staysInside(file: string, root: string): boolean {
  let realFile: string;
  let realRoot: string;
  try {
    realFile = realpathSync(file);
    realRoot = realpathSync(root);
  } catch {
    return false;
  }
  const inside = relative(realRoot, realFile);
  return inside !== '' && !inside.startsWith('..') && !isAbsolute(inside);
}

function decodeFragment(fragment: string): string {
  try {
    return decodeURIComponent(fragment);
  } catch {
    return fragment;
  }
}

/** Path relative to the events folder, `/`-separated. */
export function catalogPath(absolutePath: string, catalogRoot: string): string {
  return relative(catalogRoot, absolutePath).split(sep).join('/');
}

function shortLocation(location: string, fromFile: string, context: BundleContext): string {
  const hash = location.indexOf('#');
  const file = location.slice(0, hash);
  const pointer = location.slice(hash + 1);
  return file === fromFile ? `#${pointer}` : `${catalogPath(file, context.catalogRoot)}#${pointer}`;
}
