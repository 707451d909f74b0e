/** The compatibility checker's public API (re-exported from the package's main entry). */
export {
  diffSchemas,
  checkReadable,
  type SchemaChange,
  type SchemaDiffResult,
} from './diff-schemas.js';
export {
  checkCatalog,
  type CheckCatalogOptions,
  type CatalogCheckReport,
} from './check-catalog.js';
export { loadCatalogAtRef, GitRefError } from './git-ref-catalog.js';
export {
  formatProblemsReport,
  formatReport,
  REPORT_FORMATS,
  type ReportFormat,
} from './report-format.js';
export { ComparisonLimitError, ComparisonProblem } from './comparison-problem.js';
export { SchemaInputError } from './schema-document.js';
export { UnjudgedChangeError } from './unjudged-change.js';
export { MODES, type Direction, type ModeDefinition } from './modes.js';
export { POLICIES, STRICT_COMPATIBLE, LENIENT_COMPATIBLE } from './policy.js';
export {
  DIFFERENCE_TYPES,
  ALL_DIFFERENCE_TYPES,
  type DifferenceType,
} from './rules/difference-types.js';
export {
  deployOrderText,
  IMMUTABILITY_RULES,
  type CompatibilityViolation,
  type DeployOrder,
} from './violation.js';
