/**
 * The one hash evgen uses to key its caches and compare files: sha256, hex. `contentHash`
 * remembers a generated file's hash on the file object, because the generator (duplicate-file
 * check) and the output plan (comparison and build record) both need it for every file.
 */
import { createHash } from 'node:crypto';

export function sha256(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

const hashes = new WeakMap<object, string>();

/** sha256 of `file.content`, computed once per file object (its content is never reassigned). */
export function contentHash(file: { readonly content: string }): string {
  let hash = hashes.get(file);
  if (hash === undefined) {
    hash = sha256(file.content);
    hashes.set(file, hash);
  }
  return hash;
}
