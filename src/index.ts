// Generator API (`evgen`). The runtime lives in `evgen-runtime`.
export type * from './catalog/model.js';
export type * from './codegen/target.js';
export { loadCatalog } from './catalog/load-catalog.js';
export { CatalogError, formatProblem, type CatalogProblem } from './catalog/catalog-error.js';
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
export * from './codegen/render/index.js';
export { allTargets } from './codegen/targets/index.js';
export { typesTarget } from './codegen/targets/types.js';
export { validatorsTarget } from './codegen/targets/validators.js';
export { envelopesTarget } from './codegen/targets/envelopes.js';
export { indexModuleTarget } from './codegen/targets/index-module.js';
export { consumersTarget } from './codegen/targets/consumers.js';
export { rabbitmqTarget } from './codegen/targets/rabbitmq.js';
export { kafkaTarget } from './codegen/targets/kafka.js';
export { outboxTarget } from './codegen/targets/outbox.js';
export { writerSchema, readerSchema } from './schema/views.js';
