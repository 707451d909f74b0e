/**
 * The contract every output target implements. A target is pure: it turns the catalog into
 * files (path → content) and never touches the file system; only the CLI writes.
 */
import type { Catalog } from '../catalog/model.js';

export interface GeneratedFile {
  /** Path relative to the output folder, `/`-separated, e.g. `order/order-created/envelope.ts`. */
  readonly path: string;
  /** Final bytes (formatted, LF line endings, ending with a newline). */
  readonly content: string;
}

/**
 * A file as a target produces it: the body only. `generate()` finishes every file the same way:
 * the header naming `sources` in the file's comment syntax, then prettier for TypeScript and
 * JavaScript, LF line endings and one trailing newline.
 */
export interface TargetFile {
  /** Path relative to the output folder, `/`-separated. */
  readonly path: string;
  /** The content without the header. */
  readonly body: string;
  /** Catalog-relative files the body is generated from, named in the header (none: "the event catalog"). */
  readonly sources: readonly string[];
  /**
   * Whether `generate()` runs prettier on it; default: for `.ts` and `.js` files. A target that
   * emits code already in its final layout may say false to save the time.
   */
  readonly format?: boolean;
  /**
   * The body is written in prettier's layout as far as `layOutAsPrettier` can tell (import lists
   * aside): generate() then skips prettier when that function accepts the file, and runs it
   * otherwise. The bytes are the same either way.
   */
  readonly laidOut?: boolean;
}

export interface TargetContext {
  readonly catalog: Catalog;
  /** Module specifier generated code uses for the runtime, normally `evgen-runtime`. */
  readonly runtimeImport: string;
}

export interface Target {
  /** Short kebab-case name used in config files and messages, e.g. `envelopes`. */
  readonly name: string;
  /**
   * Names of the targets whose files this target's files import (e.g. `outbox` imports each
   * event's `envelope.ts` and `types.ts`). generate() refuses a selection that leaves one out,
   * so no build writes a file that imports one it did not generate.
   */
  readonly requires?: readonly string[];
  /**
   * `event`: what the target generates for a catalog is exactly the union of what it generates
   * for the catalog without events and for each event alone (each event's files depend on that
   * event and the runtime import only). generate() then runs it per event, and an incremental
   * build reuses the files of unchanged events. Default `catalog`: always run on the whole catalog.
   */
  readonly scope?: 'event' | 'catalog';
  /**
   * false: the target never reads payload schemas (`schema`, `bundled`), only the catalog's
   * metadata and version numbers. It then always runs on a catalog whose versions carry no
   * schema (reading one throws), so an incremental build keys it on the metadata alone and a
   * schema edit does not regenerate it. Default true.
   */
  readonly readsSchemas?: boolean;
  generate(context: TargetContext): Promise<readonly TargetFile[]> | readonly TargetFile[];
}
