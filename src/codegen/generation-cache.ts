/**
 * What an incremental build remembers: the files a target produced for given inputs, under a
 * key that hashes those inputs. The generator only asks and records; where entries live (and
 * that a damaged entry reads as a miss) is the cache implementation's business.
 */
import { createHash } from 'node:crypto';
import type { GeneratedFile } from './target.js';

export interface GenerationCache {
  /** The files recorded under `key`, or undefined (never a partial or damaged entry). */
  get(key: string): Promise<readonly GeneratedFile[] | undefined>;
  /** Records the files generated for `key`, replacing an earlier entry. */
  set(key: string, files: readonly GeneratedFile[]): Promise<void>;
}

/** A sha256 over the parts, each length-prefixed so that no two part lists share a key. */
export function cacheKey(parts: readonly string[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(`${Buffer.byteLength(part, 'utf8')}:`).update(part);
  return hash.digest('hex');
}
