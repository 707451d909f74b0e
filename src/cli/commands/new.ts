/**
 * `evgen new <domain>/<EventName>`: scaffolds `event.json` and `v1.schema.json` (with the
 * aggregate id property already required), refusing to overwrite anything and refusing a name
 * whose generated code would clash with an existing event (the build would refuse it anyway).
 * The transport blocks it writes (`kafka`, `rabbitmq`, `pulsar`) are `--transports`, else the ones the
 * catalog's events already use, so a Kafka-only catalog gets no `rabbitmq` block.
 */
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import { listEventFolders } from '../../catalog/event-folder.js';
import { BROKER_TRANSPORTS } from '../../catalog/event-transports.js';
import type { BrokerTransport } from '../../catalog/model.js';
import { seeDocs } from '../../catalog/doc-sections.js';
import { generatedNames } from '../../catalog/name-rules.js';
import { displayPath } from '../../catalog/read-json-file.js';
import { camelCase, kebabCase, pascalCase } from '../../common/naming.js';
import { addFolderOptions, refuse, reportingProblems } from '../command-support.js';
import { loadConfig } from '../config.js';
import { EXIT_OK } from '../exit-codes.js';
import { parseEventRef } from '../event-ref.js';
import { printed } from '../../diagnostics/printable.js';

export interface NewOptions {
  readonly events?: string;
  readonly config?: string;
  /** The aggregate (PascalCase); default: the event name without its last word. */
  readonly aggregate?: string;
  /** The payload property holding the aggregate id; default: `<aggregate>Id` in camelCase. */
  readonly id?: string;
  /** `kafka`, `rabbitmq`, `pulsar`, comma-separated; default: those the catalog's events use. */
  readonly transports?: string;
}

const AGGREGATE = /^[A-Z][A-Za-z0-9]*$/;
const AGGREGATE_ID = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The aggregate an event name implies: every word but the last, which names what happened
 * (`InvoiceIssued` → `Invoice`, `LineItemAdded` → `LineItem`); a one-word name falls back to
 * the domain. `--aggregate` overrides it when the name does not fit that pattern.
 */
export function aggregateFromEventName(eventName: string, domain: string): string {
  const words = eventName.match(/[A-Z]+(?![a-z])|[A-Z][a-z0-9]*|[0-9]+/g) ?? [];
  return words.length >= 2 ? words.slice(0, -1).join('') : pascalCase(domain);
}

export function registerNew(program: Command): void {
  addFolderOptions(
    program
      .command('new')
      .description('scaffold a new event: <domain>/<EventName>/event.json and v1.schema.json')
      .argument('<domain/EventName>', 'e.g. order/OrderCreated')
      .option(
        '--aggregate <Name>',
        'aggregate type, PascalCase (default: the event name without its last word, e.g. Invoice for InvoiceIssued)',
      )
      .option(
        '--id <property>',
        'payload property holding the aggregate id (default: <aggregate>Id, e.g. invoiceId)',
      )
      .option(
        '--transports <list>',
        "transport blocks to write, comma-separated: kafka, rabbitmq, pulsar (default: those the catalog's events use; kafka,rabbitmq in an empty catalog)",
      ),
  ).action(async (ref: string, options: NewOptions) => {
    process.exitCode = await runNew(ref, options);
  });
}

export function runNew(ref: string, options: NewOptions): Promise<number> {
  return reportingProblems(async () => {
    const parsed = parseEventRef(ref);
    if (options.aggregate !== undefined && !AGGREGATE.test(options.aggregate)) {
      throw refuse({
        code: 'bad-option',
        file: '--aggregate',
        message: `"${options.aggregate}" is not a PascalCase aggregate name`,
        hint: 'e.g. --aggregate Invoice (letters and digits, starting with a capital letter)',
      });
    }
    if (options.id !== undefined && !AGGREGATE_ID.test(options.id)) {
      throw refuse({
        code: 'bad-option',
        file: '--id',
        message: `"${options.id}" is not a property name evgen can use as the aggregate id`,
        hint: 'e.g. --id invoiceId (letters, digits and _, not starting with a digit)',
      });
    }
    const requested = transportsOption(options.transports);
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
    const transports = requested ?? (await catalogTransports(config.events));

    const aggregate = options.aggregate ?? aggregateFromEventName(parsed.name, parsed.domain);
    const aggregateId = options.id ?? `${camelCase(aggregate)}Id`;
    const eventJson = {
      description: `TODO: describe what happened, e.g. "${aggregate} was …".`,
      aggregate,
      aggregateId,
      compatibility: 'FULL_TRANSITIVE',
      ...(transports.includes('kafka') ? { kafka: { topic: `${parsed.domain}.events` } } : {}),
      ...(transports.includes('rabbitmq')
        ? {
            rabbitmq: {
              exchange: parsed.domain,
              routingKey: `${parsed.domain}.${kebabCase(parsed.name)}`,
            },
          }
        : {}),
      ...(transports.includes('pulsar') ? { pulsar: { topic: `${parsed.domain}.events` } } : {}),
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
      printed`created ${written.join(', ')} (aggregate ${aggregate}, id ${aggregateId}; change them with --aggregate/--id); describe the event and its payload, then run \`evgen build\`` +
        '\n',
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

const DEFAULT_NEW_TRANSPORTS: readonly BrokerTransport[] = ['kafka', 'rabbitmq'];

/** `--transports kafka,rabbitmq` → the transports, in BROKER_TRANSPORTS order; undefined when not given. */
function transportsOption(value: string | undefined): readonly BrokerTransport[] | undefined {
  if (value === undefined) return undefined;
  const names = value.split(',').map((name) => name.trim());
  const unknown = names.filter((name) => !(BROKER_TRANSPORTS as readonly string[]).includes(name));
  if (unknown.length > 0 || names.length === 0) {
    throw refuse({
      code: 'bad-option',
      file: '--transports',
      message: `"${value}" is not a list of transports`,
      hint: `use one or more of ${BROKER_TRANSPORTS.join(', ')}, comma-separated (${seeDocs('transports')})`,
    });
  }
  return BROKER_TRANSPORTS.filter((transport) => names.includes(transport));
}

/**
 * The transport blocks the catalog's events declare (any event's), read from their event.json
 * files as they are; Kafka and RabbitMQ when there are none yet, or none declares any (Pulsar
 * only when asked for or already used: its WebSocket API must be enabled on the broker).
 */
async function catalogTransports(eventsDir: string): Promise<readonly BrokerTransport[]> {
  const used = new Set<BrokerTransport>();
  for (const event of await listEventFolders(eventsDir)) {
    const meta: unknown = await readFile(join(event.dir, 'event.json'), 'utf8').then(
      (text) => JSON.parse(text) as unknown,
      () => undefined,
    );
    if (typeof meta !== 'object' || meta === null) continue;
    for (const transport of BROKER_TRANSPORTS) if (transport in meta) used.add(transport);
  }
  return used.size === 0 ? DEFAULT_NEW_TRANSPORTS : BROKER_TRANSPORTS.filter((t) => used.has(t));
}
