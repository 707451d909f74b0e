/**
 * Every CLI command, one file each; each module exports a function that registers its command.
 * Modules are loaded on demand: a run loads only the command it executes (heavy dependencies
 * such as the code generator, prettier or the database drivers are never loaded by `evgen
 * --version` or `evgen check`).
 */
import type { Command } from 'commander';

export type RegisterCommand = (program: Command) => void;

export interface CommandEntry {
  /** The command's name on the command line. */
  readonly name: string;
  /** Loads the command's module and returns its register function. */
  readonly load: () => Promise<RegisterCommand>;
}

export const commands: readonly CommandEntry[] = [
  { name: 'alerts', load: async () => (await import('./alerts.js')).registerAlerts },
  { name: 'asyncapi', load: async () => (await import('./asyncapi.js')).registerAsyncApi },
  { name: 'build', load: async () => (await import('./build.js')).registerBuild },
  { name: 'catalog', load: async () => (await import('./catalog.js')).registerCatalog },
  { name: 'check', load: async () => (await import('./check.js')).registerCheck },
  {
    name: 'connect-config',
    load: async () => (await import('./connect-config.js')).registerConnectConfig,
  },
  { name: 'dashboard', load: async () => (await import('./dashboard.js')).registerDashboard },
  { name: 'diff', load: async () => (await import('./diff.js')).registerDiff },
  { name: 'dlq', load: async () => (await import('./dlq.js')).registerDlq },
  { name: 'new', load: async () => (await import('./new.js')).registerNew },
  { name: 'outbox', load: async () => (await import('./outbox.js')).registerOutbox },
  { name: 'registry', load: async () => (await import('./registry.js')).registerRegistry },
  { name: 'scaffold', load: async () => (await import('./scaffold.js')).registerScaffold },
  { name: 'tables', load: async () => (await import('./tables.js')).registerTables },
  { name: 'trace', load: async () => (await import('./trace.js')).registerTrace },
  { name: 'version', load: async () => (await import('./version.js')).registerVersion },
];
