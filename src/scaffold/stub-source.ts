/**
 * Source text of handler, upcaster and wiring stubs. Catalog values reach it only through the
 * safe rendering helpers (identifier, string literal, comment text).
 */
import type { ConsumerDefinition, EventDefinition } from '../catalog/model.js';
import { docComment, identifier, stringLiteral } from '../codegen/render/index.js';
import { upcasterKey } from '../codegen/targets/consumers.js';
import { consumerNames, handlerFunctionName, upcasterFunctionName } from './stub-names.js';

/** What the guard already does, stated once at the top of every handler file. */
export function handlerFileDoc(consumer: ConsumerDefinition, event: EventDefinition): string {
  return docComment(
    [
      `${consumer.name} ← ${event.eventType}: your handler code.`,
      '`evgen scaffold` created this file and never overwrites it; when a new version of the event',
      'appears it only appends a stub for that version.',
      '',
      'What the inbox guard already guarantees for every handler here:',
      `- At most once per messageId for consumer ${consumer.name}: a redelivery resolves 'duplicate'`,
      '  without calling the handler again.',
      '- One transaction: write through ctx.tx only; your writes and the inbox row commit or roll',
      '  back together (a throw rolls back both, so the redelivery runs the handler again).',
      '- Ack after commit: the transport acknowledges the delivery only after that commit.',
      'Throw RetryableError for transient failures (retried later) and NonRetryableError for',
      'permanent ones (dead letter). For per-aggregate order wrap the writes in ctx.inOrder(…).',
    ].join('\n'),
  );
}

export function upcasterFileDoc(consumer: ConsumerDefinition, event: EventDefinition): string {
  return docComment(
    [
      `${consumer.name} ← ${event.eventType}: upcasters, one per consecutive version pair.`,
      'An older message is converted step by step and handed to the handler of the newer version.',
      'Keep them pure (no I/O): they run inside the inbox transaction on every delivery of an old version.',
      '`evgen scaffold` created this file and never overwrites it; it only appends missing upcasters.',
    ].join('\n'),
  );
}

export function runtimeValueImport(runtimeImport: string): string {
  return `import { NonRetryableError } from ${stringLiteral(runtimeImport)};`;
}

export function typeImport(names: readonly string[], specifier: string): string {
  return `import type { ${names.map((name) => identifier(name)).join(', ')} } from ${stringLiteral(specifier)};`;
}

export function handlerStub(
  consumer: ConsumerDefinition,
  event: EventDefinition,
  version: number,
): string {
  const type = consumerNames(consumer).handlerType(event, version);
  return [
    docComment(`Handles ${event.eventType} version ${version}.`),
    `export const ${identifier(handlerFunctionName(event, version))}: ${identifier(type)} = async (envelope, ctx) => {`,
    '  // TODO: implement. Read envelope.payload; write through ctx.tx only.',
    `  throw new NonRetryableError(${stringLiteral(`${consumer.name}: handler for ${event.eventType} v${version} is not implemented`)});`,
    '};',
  ].join('\n');
}

export function upcasterStub(
  consumer: ConsumerDefinition,
  event: EventDefinition,
  from: number,
): string {
  const type = consumerNames(consumer).upcasterType(event, from);
  return [
    docComment(`Converts ${event.eventType} payloads from v${from} to v${from + 1}.`),
    `export const ${identifier(upcasterFunctionName(event, from))}: ${identifier(type)} = (payload) => {`,
    `  // TODO: return the v${from + 1} payload built from the v${from} one.`,
    `  throw new NonRetryableError(${stringLiteral(`${consumer.name}: upcaster ${upcasterKey(from)} of ${event.eventType} is not implemented`)});`,
    '};',
  ].join('\n');
}

export interface WiringEntry {
  readonly event: EventDefinition;
  /** Module specifier of the event's handler file from the wiring file: `./order-created.js`. */
  readonly handlerModule: string;
  readonly upcasterModule: string;
}

/** `index.ts` of a consumer's handler folder: the handler and upcaster tables, ready for the factory. */
export function wiringSource(
  consumer: ConsumerDefinition,
  entries: readonly WiringEntry[],
  generatedModule: string,
): string {
  const names = consumerNames(consumer);
  const imports: string[] = [
    typeImport([names.handlersType, names.upcastersType], generatedModule),
  ];
  const handlerRows: string[] = [];
  const upcasterRows: string[] = [];
  for (const { event, handlerModule, upcasterModule } of entries) {
    const latest = event.versions[event.versions.length - 1]!.version;
    imports.push(
      `import { ${identifier(handlerFunctionName(event, latest))} } from ${stringLiteral(handlerModule)};`,
    );
    handlerRows.push(
      `  ${stringLiteral(event.eventType)}: { ${latest}: ${identifier(handlerFunctionName(event, latest))} },`,
    );
    const steps = event.versions.slice(0, -1).map(({ version }) => version);
    if (steps.length > 0) {
      imports.push(
        `import { ${steps.map((from) => identifier(upcasterFunctionName(event, from))).join(', ')} } from ${stringLiteral(upcasterModule)};`,
      );
      upcasterRows.push(
        `  ${stringLiteral(event.eventType)}: { ${steps.map((from) => `${upcasterKey(from)}: ${identifier(upcasterFunctionName(event, from))}`).join(', ')} },`,
      );
    }
  }
  return [
    docComment(
      [
        `${consumer.name}: its handlers and upcasters, wired into the generated tables. Pass both to`,
        `${names.factoryName}({ db, handlers, upcasters }).`,
        '`evgen scaffold` created this file once and never changes it: when a new event or version',
        'appears, the type-checker points here until you wire the new stub in.',
      ].join('\n'),
    ),
    ...imports,
    '',
    `export const handlers: ${identifier(names.handlersType)} = {`,
    ...handlerRows,
    '};',
    '',
    `export const upcasters: ${identifier(names.upcastersType)} = {`,
    ...upcasterRows,
    '};',
    '',
  ].join('\n');
}
