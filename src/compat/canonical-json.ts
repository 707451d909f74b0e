/** Canonical JSON lives in src/common (the catalog loader uses it too); kept here for compat's imports. */
export { canonicalJson } from '../common/canonical-json.js';
