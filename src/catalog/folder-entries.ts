/**
 * How the catalog loader reads a folder: entries in sorted order (results never depend on the
 * file system), hidden entries skipped, and entries evgen cannot use reported, never ignored.
 */
import type { Dirent } from 'node:fs';
import { readdirSync } from 'node:fs';
import { compareStrings } from '../common/json-value.js';
import type { LoadContext } from './load-context.js';
import { displayPath } from './read-json-file.js';

/** Synchronous: the loader reads one folder at a time, and readdirSync costs a tenth of the CPU. */
export function sortedEntries(dir: string): Dirent[] {
  const entries = readdirSync(dir, { withFileTypes: true });
  return entries.sort((a, b) => compareStrings(a.name, b.name));
}

/** Hidden entries (`.git`, `.DS_Store`) are skipped silently; a name like `...` is not hidden. */
export function isHidden(name: string): boolean {
  return /^\.[^.]/.test(name);
}

/**
 * Entries evgen cannot read as what they look like get a problem instead of being skipped
 * silently: symbolic links (evgen never follows them inside the events folder) and names made of
 * dots such as `...`. Returns true when the entry was reported.
 */
export function refuseOddEntry(entry: Dirent, path: string, context: LoadContext): boolean {
  if (entry.isSymbolicLink()) {
    context.problems.add({
      code: 'symbolic-link',
      file: displayPath(path),
      pointer: '',
      message: 'is a symbolic link; evgen does not follow links inside the events folder',
      hint: 'replace the link with the folder or file itself (shared schemas belong in events/_common/)',
    });
    return true;
  }
  if (entry.name.startsWith('..')) {
    context.problems.add({
      code: 'invalid-name',
      file: displayPath(path),
      pointer: '',
      message: `${JSON.stringify(entry.name)} is not a domain, event or file name evgen can use`,
      hint: 'rename or remove it',
    });
    return true;
  }
  return false;
}

export function unexpectedFile(path: string, hint: string, context: LoadContext): void {
  context.problems.add({
    code: 'unexpected-file',
    file: displayPath(path),
    pointer: '',
    message: 'evgen does not know what this file is',
    hint,
  });
}
