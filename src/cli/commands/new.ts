/**
 * `evgen new <domain>/<EventName>`: scaffolds `event.json` and `v1.schema.json` (with the
 * aggregate id property already required), refusing to overwrite anything.
 */
import { access, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import { CatalogError, formatProblem } from '../../catalog/catalog-error.js';
import { displayPath } from '../../catalog/read-json-file.js';
import { camelCase, kebabCase, pascalCase } from '../../codegen/naming.js';
import { loadConfig } from '../config.js';
import { EXIT_BAD_INPUT, EXIT_OK } from '../exit-codes.js';
import { parseEventRef } from '../event-ref.js';

export interface NewOptions {
  readonly events?: string;
  readonly config?: string;
}

export function registerNew(program: Command): void {
  program
    .command('new')
    .description('scaffold a new event: <domain>/<EventName>/event.json and v1.schema.json')
    .argument('<domain/EventName>', 'e.g. order/OrderCreated')
    .option('--events <dir>', 'events folder (default from evgen.config.json, else "events")')
    .option('--config <file>', 'config file (default: ./evgen.config.json when it exists)')
    .action(async (ref: string, options: NewOptions) => {
      process.exitCode = await runNew(ref, options);
    });
}

export async function runNew(ref: string, options: NewOptions): Promise<number> {
  try {
    const parsed = parseEventRef(ref);
    const config = await loadConfig(options);
    const dir = join(config.events, parsed.domain, parsed.name);
    const aggregate = pascalCase(parsed.domain);
    const aggregateId = `${camelCase(parsed.domain)}Id`;
    const eventJson = {
      description: `TODO: describe what happened, e.g. "${aggregate} was …".`,
      aggregate,
      aggregateId,
      compatibility: 'FULL_TRANSITIVE',
      kafka: { topic: `${parsed.domain}.events` },
      rabbitmq: { exchange: parsed.domain, routingKey: `${parsed.domain}.${kebabCase(parsed.name)}` },
    };
    const schema = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      title: parsed.name,
      type: 'object',
      properties: { [aggregateId]: { type: 'string', format: 'uuid' } },
      required: [aggregateId],
      additionalProperties: false,
    };
    const files = [
      ['event.json', eventJson],
      ['v1.schema.json', schema],
    ] as const;
    // Check both first so a refusal never leaves half an event behind.
    for (const [file] of files) {
      const path = join(dir, file);
      if (await access(path).then(() => true, () => false)) {
        process.stderr.write(`evgen new: ${displayPath(path)} already exists; not overwritten\n`);
        return EXIT_BAD_INPUT;
      }
    }
    await mkdir(dir, { recursive: true });
    const written: string[] = [];
    for (const [file, content] of files) {
      const path = join(dir, file);
      try {
        await writeFile(path, `${JSON.stringify(content, null, 2)}\n`, { flag: 'wx' }); // wx: never overwrite
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        process.stderr.write(`evgen new: ${displayPath(path)} already exists; not overwritten\n`);
        return EXIT_BAD_INPUT;
      }
      written.push(displayPath(path));
    }
    process.stdout.write(`created ${written.join(', ')}\n`);
    return EXIT_OK;
  } catch (error) {
    if (error instanceof CatalogError) {
      for (const problem of error.problems) process.stderr.write(`${formatProblem(problem)}\n`);
      return EXIT_BAD_INPUT;
    }
    throw error;
  }
}
