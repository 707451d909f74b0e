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

export interface TargetContext {
  readonly catalog: Catalog;
  /** Module specifier generated code uses for the runtime, normally `evgen-runtime`. */
  readonly runtimeImport: string;
}

export interface Target {
  /** Short kebab-case name used in config files and messages, e.g. `envelopes`. */
  readonly name: string;
  readonly description: string;
  generate(context: TargetContext): Promise<readonly GeneratedFile[]> | readonly GeneratedFile[];
}
