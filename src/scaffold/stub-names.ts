/**
 * Names and paths of handler stubs. The stubs import the types the consumers target exports,
 * so both derive names from the same functions (src/common/naming.ts, codegen/targets/consumers.ts).
 */
import { posix } from 'node:path';
import type { ConsumerDefinition, EventDefinition } from '../catalog/model.js';
import { consumerModulePath, consumerNames } from '../codegen/targets/consumers.js';
import { camelCase, kebabCase, versionTypeName } from '../common/naming.js';

/** `inventory-service/order-created.ts` (relative to the handlers folder). */
export function handlerFilePath(
  consumer: Pick<ConsumerDefinition, 'name'>,
  event: Pick<EventDefinition, 'name'>,
): string {
  return `${kebabCase(consumer.name)}/${kebabCase(event.name)}.ts`;
}

/** `inventory-service/upcasters/order-created.ts`. */
export function upcasterFilePath(
  consumer: Pick<ConsumerDefinition, 'name'>,
  event: Pick<EventDefinition, 'name'>,
): string {
  return `${kebabCase(consumer.name)}/upcasters/${kebabCase(event.name)}.ts`;
}

/** `inventory-service/index.ts`: wires the handlers and upcasters into the generated tables. */
export function wiringFilePath(consumer: Pick<ConsumerDefinition, 'name'>): string {
  return `${kebabCase(consumer.name)}/index.ts`;
}

/** `handleOrderCreatedV2`. */
export function handlerFunctionName(event: Pick<EventDefinition, 'name'>, version: number): string {
  return `handle${versionTypeName(event, version)}`;
}

/** `orderCreatedV1ToV2`. */
export function upcasterFunctionName(event: Pick<EventDefinition, 'name'>, from: number): string {
  return `${camelCase(versionTypeName(event, from))}ToV${from + 1}`;
}

/**
 * Module specifier of the generated consumer module as seen from a file in the handlers folder.
 * `handlersDir` and `generatedDir` are paths relative to one common base (e.g. the project root).
 */
export function generatedConsumerImport(
  consumer: Pick<ConsumerDefinition, 'name'>,
  fromFile: string,
  handlersDir: string,
  generatedDir: string,
): string {
  const from = posix.dirname(posix.join(toPosix(handlersDir), fromFile));
  const to = posix
    .join(toPosix(generatedDir), consumerModulePath(consumer))
    .replace(/\.ts$/, '.js');
  const relative = posix.relative(from, to);
  return relative.startsWith('.') ? relative : `./${relative}`;
}

function toPosix(path: string): string {
  return path.replace(/\\/g, '/');
}

export { consumerNames };
