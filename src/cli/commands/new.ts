/**
 * `evgen new <domain>/<EventName>`: scaffolds `event.json` and `v1.schema.json` (with the
 * aggregate id property already required), refusing to overwrite anything and refusing a name
 * whose generated code would clash with an existing event (the build would refuse it anyway).
 */
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import { listEventFolders } from '../../catalog/event-folder.js';
import { generatedNames } from '../../catalog/name-rules.js';
import { displayPath } from '../../catalog/read-json-file.js';
import { camelCase, kebabCase, pascalCase } from '../../codegen/naming.js';
import { addFolderOptions, refuse, reportingProblems } from '../command-support.js';
import { loadConfig } from '../config.js';
import { EXIT_OK } from '../exit-codes.js';
import { parseEventRef } from '../event-ref.js';

export interface NewOptions {
  readonly events?: string;
  readonly config?: string;
}

export function registerNew(program: Command): void {
  addFolderOptions(
    program
      .command('new')
      .description('scaffold a new event: <domain>/<EventName>/event.json and v1.schema.json')
      .argument('<domain/EventName>', 'e.g. order/OrderCreated'),
  ).action(async (ref: string, options: NewOptions) => {
    process.exitCode = await runNew(ref, options);
  });
}

export function runNew(ref: string, options: NewOptions): Promise<number> {
  return reportingProblems(async () => {
    const parsed = parseEventRef(ref);
    const config = await loadConfig(options);
    const dir = join(config.events, parsed.domain, parsed.name);
    // Check both files first so a refusal never leaves half an event behind.
    for (const file of ['event.json', 'v1.schema.json']) {
      const path = join(dir, file);
      if (
        await stat(path).then(
          () => true,
          () => false,
        )
      ) {
        throw refuse({
          code: 'event-exists',
          file: displayPath(path),
          message: 'already exists; not overwritten',
          hint: `to change the payload of ${parsed.domain}/${parsed.name}, start its next version with \`evgen version ${parsed.domain}/${parsed.name}\`; for a new event pick another name`,
        });
      }
    }
    await refuseNameClash(config.events, parsed);

    const aggregate = pascalCase(parsed.domain);
    const aggregateId = `${camelCase(parsed.domain)}Id`;
    const eventJson = {
      description: `TODO: describe what happened, e.g. "${aggregate} was …".`,
      aggregate,
      aggregateId,
      compatibility: 'FULL_TRANSITIVE',
      kafka: { topic: `${parsed.domain}.events` },
      rabbitmq: {
        exchange: parsed.domain,
        routingKey: `${parsed.domain}.${kebabCase(parsed.name)}`,
      },
    };
    const schema = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      title: parsed.name,
      type: 'object',
      properties: { [aggregateId]: { type: 'string', format: 'uuid' } },
      required: [aggregateId],
      additionalProperties: false,
    };
    await mkdir(dir, { recursive: true });
    const written: string[] = [];
    for (const [file, content] of [
      ['event.json', eventJson],
      ['v1.schema.json', schema],
    ] as const) {
      const path = join(dir, file);
      // wx: never overwrite, even a file that appeared since the check above.
      await writeFile(path, `${JSON.stringify(content, null, 2)}\n`, { flag: 'wx' });
      written.push(displayPath(path));
    }
    process.stdout.write(
      `created ${written.join(', ')}; describe the event and its payload, then run \`evgen build\`\n`,
    );
    return EXIT_OK;
  });
}

/** Refuses a new event whose generated names (types, functions, folder) another event already has. */
async function refuseNameClash(
  eventsDir: string,
  event: { domain: string; name: string },
): Promise<void> {
  const wanted = new Set(generatedNames(event, [1]));
  for (const other of await listEventFolders(eventsDir)) {
    const shared = generatedNames(other, other.versions).filter((name) => wanted.has(name));
    if (shared.length === 0) continue;
    const example =
      shared.find((name) => name.endsWith('Payload')) ?? shared[0]!.replace(/^module:/, 'folder ');
    throw refuse({
      code: 'name-collision',
      file: displayPath(join(other.dir, 'event.json')),
      message: `${event.domain}/${event.name} would clash with this event (both would generate ${example}); nothing was written`,
      hint: `choose another name, e.g. prefix it with its domain: \`evgen new ${event.domain}/${pascalCase(event.domain)}${event.name}\``,
    });
  }
}
