// Generator API (`evgen`). The runtime lives in `evgen/runtime`.
export type * from './catalog/model.js';
export type * from './codegen/target.js';
