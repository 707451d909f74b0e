// Handler stubs for consumers (`evgen scaffold`): user-owned files, created once, extended without rewriting.
export * from './plan-scaffold.js';
export * from './stub-names.js';
