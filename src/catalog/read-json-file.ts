/**
 * Reads one JSON file of the catalog, reporting unreadable files, invalid JSON (with line and
 * column) and documents nested deeper than evgen accepts.
 */
import { readFileSync, statSync } from 'node:fs';
import { isAbsolute, relative, sep } from 'node:path';
import { pointerSegment } from '../common/json-pointer.js';
import type { ProblemList } from './problem-list.js';

/**
 * Deepest nesting of objects/arrays a catalog file may have. Real schemas stay far below it; the
 * limit keeps recursive walkers (ours, ajv's, json-schema-to-typescript's) away from stack overflows.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * Largest catalog file evgen reads. Real schemas and event.json files are a few KB (an enum of
 * 100,000 values is under 1 MB); a 100 MB description once took the build to 4 GB. The file is
 * refused before it is read.
 */
export const MAX_FILE_BYTES = 2 * 1024 * 1024;

/** How problems name a file: relative to the working folder, or absolute when outside it. */
export function displayPath(absolutePath: string): string {
  const fromCwd = relative(process.cwd(), absolutePath);
  const shown =
    fromCwd === '' || fromCwd.startsWith('..') || isAbsolute(fromCwd) ? absolutePath : fromCwd;
  return shown.split(sep).join('/');
}

export type JsonRead = { ok: true; value: unknown; text: string } | { ok: false };

export async function readJsonFile(absolutePath: string, problems: ProblemList): Promise<JsonRead> {
  const file = displayPath(absolutePath);
  let text: string;
  try {
    // Synchronous, as the read below: a promise stat per file cost ~10x the CPU of statSync, and
    // the loader awaits each file in turn anyway.
    const { size } = statSync(absolutePath);
    if (size > MAX_FILE_BYTES) {
      problems.add({
        code: 'file-too-large',
        file,
        pointer: '',
        message: `the file is ${(size / 1024 / 1024).toFixed(1)} MB; evgen reads catalog files up to ${MAX_FILE_BYTES / 1024 / 1024} MB (limit ${MAX_FILE_BYTES} bytes)`,
        hint: 'shorten it: move long documentation out of descriptions, split the payload into smaller events',
      });
      return { ok: false };
    }
    // Synchronous: for hundreds of small files fs/promises' readFile costs over twice the CPU.
    text = readFileSync(absolutePath, 'utf8');
  } catch (error) {
    problems.add({
      code: 'unreadable-file',
      file,
      pointer: '',
      message: `cannot read the file (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      hint: 'check that the file exists and is readable',
    });
    return { ok: false };
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    problems.add({
      code: 'invalid-json',
      file,
      pointer: '',
      message: `invalid JSON ${describeParseError(text, error)}`,
      hint: 'fix the JSON syntax (no comments, no trailing commas, double-quoted keys and strings)',
    });
    return { ok: false };
  }
  const deep = nestingDepth(text) < MAX_JSON_DEPTH ? undefined : findTooDeep(value);
  if (deep !== undefined) {
    problems.add({
      code: 'nesting-too-deep',
      file,
      pointer: deep,
      message: `nesting deeper than ${MAX_JSON_DEPTH} levels`,
      hint: 'flatten the schema: move nested object schemas into definitions/$defs and $ref them',
    });
    return { ok: false };
  }
  // A lone surrogate can only come from a \u escape (the text was decoded from UTF-8, which has
  // none): without such an escape the values need no walk.
  const lone = ESCAPED_SURROGATE.test(text) ? findLoneSurrogate(value, '') : undefined;
  if (lone !== undefined) {
    problems.add({
      code: 'lone-surrogate',
      file,
      pointer: lone.pointer,
      message: `${lone.where} contains a lone UTF-16 surrogate (${lone.escape}): it is not a Unicode character, so no validator, $ref or generated file can carry it`,
      hint: 'remove that \\u escape, or write the whole character (a high and a low surrogate together)',
    });
    return { ok: false };
  }
  return { ok: true, value, text };
}

const ESCAPED_SURROGATE = /\\u[dD][89a-fA-F]/;

/**
 * The deepest nesting of objects and arrays in a JSON text (its root container counts 1), by
 * counting brackets outside strings: a cheap test that lets most files skip findTooDeep's walk.
 */
function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 0x5c)
        index++; // a backslash escapes the next character
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) inString = true;
    else if (code === 0x7b || code === 0x5b) {
      if (++depth > deepest) deepest = depth;
    } else if (code === 0x7d || code === 0x5d) depth--;
  }
  return deepest;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The first key or string (depth-first, in document order) holding a lone surrogate. */
function findLoneSurrogate(
  value: unknown,
  pointer: string,
): { pointer: string; where: string; escape: string } | undefined {
  const escapeOf = (text: string) =>
    `\\u${LONE_SURROGATE.exec(text)![0].charCodeAt(0).toString(16).toUpperCase()}`;
  if (typeof value === 'string')
    return LONE_SURROGATE.test(value)
      ? { pointer, where: 'this string', escape: escapeOf(value) }
      : undefined;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = findLoneSurrogate(item, `${pointer}/${index}`);
      if (found !== undefined) return found;
    }
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      // The key cannot be written as a valid pointer either: point at its parent.
      if (LONE_SURROGATE.test(key))
        return { pointer, where: `the key ${JSON.stringify(key)}`, escape: escapeOf(key) };
      const found = findLoneSurrogate(item, `${pointer}/${pointerSegment(key)}`);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/** `at line 3, column 5: Unexpected token ...`, stable across Node versions (we compute the position). */
function describeParseError(text: string, error: unknown): string {
  const raw = error instanceof Error ? error.message : String(error);
  const position = /at position (\d+)/.exec(raw);
  const reason = raw
    .replace(/,? ?(in JSON )?at position \d+.*$/s, '')
    .replace(/^JSON\.parse: /, '')
    .trim();
  const offset = position !== null ? Number(position[1]) : text.length;
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - before.lastIndexOf('\n');
  return `at line ${line}, column ${column}: ${reason}`;
}

/** Pointer of the first value nested deeper than MAX_JSON_DEPTH (iterative: no recursion to overflow). */
function findTooDeep(root: unknown): string | undefined {
  const stack: { value: unknown; depth: number; pointer: string }[] = [
    { value: root, depth: 0, pointer: '' },
  ];
  while (stack.length > 0) {
    const { value, depth, pointer } = stack.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (depth >= MAX_JSON_DEPTH) return pointer;
    const entries = Array.isArray(value)
      ? value.map((item, index) => [String(index), item] as const)
      : Object.entries(value);
    for (const [key, child] of entries.reverse()) {
      stack.push({
        value: child,
        depth: depth + 1,
        pointer: `${pointer}/${pointerSegment(key)}`,
      });
    }
  }
  return undefined;
}
