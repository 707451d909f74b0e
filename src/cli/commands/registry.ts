/**
 * `evgen registry push|check|pull`: the catalog and a schema registry that speaks Confluent's
 * REST API (Confluent, Apicurio's ccompat API, Karapace, Redpanda). Each subcommand is its own
 * file; this one groups them (their shared options are in registry-connection.ts).
 */
import type { Command } from 'commander';
import { registerRegistryCheck } from './registry-check.js';
import { registerRegistryPull } from './registry-pull.js';
import { registerRegistryPush } from './registry-push.js';

export function registerRegistry(program: Command): void {
  const registry = program
    .command('registry')
    .description('push the catalog to a schema registry, check against it, pull from it');
  registerRegistryPush(registry);
  registerRegistryCheck(registry);
  registerRegistryPull(registry);
}
