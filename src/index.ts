// Generator API (`evgen`); the supported surface is listed in api-report/evgen.txt and described
// in docs/reference/runtime.md. The runtime lives in `evgen-runtime`.
export type * from './catalog/model.js';
export type * from './codegen/target.js';
export { loadCatalog } from './catalog/load-catalog.js';
export { CatalogError, type CatalogProblem } from './catalog/catalog-error.js';
export {
  formatDiagnostics,
  printable,
  DIAGNOSTIC_FORMATS,
  DiagnosticError,
  type Diagnostic,
  type DiagnosticFormat,
  type Severity,
} from './diagnostics/index.js';
export {
  generate,
  requiredClosure,
  selectTargets,
  GenerateError,
  type GenerateOptions,
} from './codegen/generate.js';
export * from './compat/index.js';
// For custom targets: the injection-safe helpers every built-in target renders values with, and
// the marker that tells evgen a file is generated. Templates and formatting stay internal:
// generate() finishes every target file (header, prettier) itself.
export {
  commentText,
  docComment,
  identifier,
  isSafeIdentifier,
  jsonLiteral,
  sortKeysDeep,
  stringLiteral,
} from './codegen/render/safe-code.js';
export { GENERATED_MARKER } from './codegen/render/header.js';
export { allTargets } from './codegen/targets/index.js';
export { typesTarget } from './codegen/targets/types.js';
export { validatorsTarget } from './codegen/targets/validators.js';
export { envelopesTarget } from './codegen/targets/envelopes.js';
export { indexModuleTarget } from './codegen/targets/index-module.js';
export { consumersTarget } from './codegen/targets/consumers.js';
export { rabbitmqTarget } from './codegen/targets/rabbitmq.js';
export { kafkaTarget } from './codegen/targets/kafka.js';
export { pulsarTarget } from './codegen/targets/pulsar.js';
export { outboxTarget } from './codegen/targets/outbox.js';
export { writerSchema, readerSchema } from './schema/views.js';
