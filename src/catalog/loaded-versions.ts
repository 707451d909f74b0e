/**
 * Payload schemas that loaded successfully, remembered between runs by the caller (the CLI's
 * build cache) so an unchanged schema is not checked and bundled again: reading, checking and
 * bundling every schema is most of what loading a large catalog costs. An entry is reused only
 * when the schema file and every file its bundle inlined still have the bytes they had, every
 * inlined file still resolves inside the events folder, and the event's aggregateId is the same;
 * these are everything loading a version depends on (the checkers belong to the generator, whose
 * fingerprint keys the caller's store). Only successes are remembered, so a broken schema is
 * reported the same way each time.
 */
import type { JsonSchema } from './model.js';

export interface LoadedVersion {
  /** sha256 of the schema file's text. */
  readonly content: string;
  /** The aggregateId its event declared (null: none), which the schema was checked against. */
  readonly aggregateId: string | null;
  /** Every other file the bundle inlined: path relative to the events folder, sha256 of its text. */
  readonly dependencies: readonly { readonly file: string; readonly content: string }[];
  readonly bundled: JsonSchema;
}

export interface LoadedVersions {
  /** The entry of the version file at `file` (relative to the events folder, `/`-separated). */
  get(file: string): LoadedVersion | undefined;
  /** Records a version loaded in this run (reused or new), to remember for the next one. */
  add(file: string, loaded: LoadedVersion): void;
}
