// Safe rendering for generator targets: the only path from catalog values to generated code.
export * from './safe-code.js';
export * from './templates.js';
export * from './header.js';
export * from './format.js';
