// Generator API (`evgen`). The runtime lives in `evgen/runtime`.
export type * from './catalog/model.js';
export type * from './codegen/target.js';
export { loadCatalog } from './catalog/load-catalog.js';
export { CatalogError, formatProblem, type CatalogProblem } from './catalog/catalog-error.js';
export { generate, selectTargets, GenerateError, type GenerateOptions } from './codegen/generate.js';
export * from './compat/index.js';
