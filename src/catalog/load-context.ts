/** State shared by the parts of one catalog load (loadCatalog and the modules it calls). */
import type { ValidateFunction } from 'ajv';
import type { CompiledSchemas } from './compiled-schemas.js';
import type { LoadedVersions } from './loaded-versions.js';
import type { KafkaWireFormat } from './model.js';
import type { ProblemList } from './problem-list.js';
import type { SchemaCheckers } from './schema-dialect.js';
import type { SchemaFiles } from './schema-files.js';

/** Shared state of one load. */
export interface LoadContext {
  readonly root: string;
  readonly problems: ProblemList;
  readonly checkers: SchemaCheckers;
  readonly files: SchemaFiles;
  readonly validateEventJson: ValidateFunction;
  readonly validateConsumerJson: ValidateFunction;
  /** Event types of every event folder, valid or not, so consumers of a broken event get no extra error. */
  readonly declaredEventTypes: Set<string>;
  readonly eventTypeFormat: string;
  /** The catalog's default Kafka wire format; an event.json's `kafka.wireFormat` overrides it. */
  readonly wireFormat: KafkaWireFormat;
  /** Schemas known to compile; compiled and added when missing (see `CompiledSchemas`). */
  readonly compiledSchemas: CompiledSchemas | undefined;
  /** Versions loaded by an earlier run; reused when their inputs are unchanged, else added. */
  readonly loadedVersions: LoadedVersions | undefined;
}
