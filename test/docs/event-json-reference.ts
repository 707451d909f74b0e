/**
 * docs/reference/event-json.md, rendered from the schemas the catalog loader validates
 * `event.json` and consumer files with (src/catalog/metadata-schemas.ts): every field, its
 * values, limits, default and description, so the reference cannot drift from the validator.
 */
import { consumerJsonSchema, eventJsonSchema } from '../../src/catalog/metadata-schemas.js';
import { cell } from './markdown-text.js';

interface FieldSchema {
  readonly type?: string;
  readonly enum?: readonly unknown[];
  readonly pattern?: string;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly minItems?: number;
  readonly items?: FieldSchema;
  readonly default?: unknown;
  readonly description?: string;
  readonly required?: readonly string[];
  readonly properties?: Readonly<Record<string, FieldSchema>>;
}

/** What values the field takes, from its schema keywords. */
function valuesOf(field: FieldSchema): string {
  if (field.enum !== undefined) return field.enum.map((value) => `\`${String(value)}\``).join(', ');
  const limits: string[] = [];
  if (field.pattern !== undefined) limits.push(`matching \`${field.pattern}\``);
  if (field.minLength !== undefined && field.minLength > 0) limits.push('not empty');
  if (field.maxLength !== undefined) limits.push(`at most ${field.maxLength} characters`);
  if (field.minimum !== undefined && field.maximum !== undefined)
    limits.push(`${field.minimum}–${field.maximum}`);
  else if (field.minimum !== undefined) limits.push(`≥ ${field.minimum}`);
  if (field.type === 'array' && field.items?.type !== undefined) {
    return `array of ${field.items.type}s${field.minItems === undefined ? '' : `, at least ${field.minItems}`}, no repeats`;
  }
  return [field.type ?? '', limits.join(', ')].filter((part) => part !== '').join(', ');
}

/** Every field, nested ones as `parent.child`, in the schema's order. */
function rows(schema: FieldSchema, prefix: string, out: string[]): void {
  for (const [name, field] of Object.entries(schema.properties ?? {})) {
    if (field.description === undefined)
      throw new Error(`${prefix}${name}: no description in the metadata schema`);
    const required = (schema.required ?? []).includes(name) ? 'yes' : '';
    const shownDefault = field.default === undefined ? '' : `\`${JSON.stringify(field.default)}\``;
    out.push(
      `| \`${prefix}${name}\` | ${required} | ${cell(valuesOf(field))} | ${shownDefault} | ${cell(field.description)} |`,
    );
    if (field.properties !== undefined) rows(field, `${prefix}${name}.`, out);
  }
}

function table(schema: FieldSchema): string[] {
  const out = [
    '| field | required | values | default | description |',
    '| --- | --- | --- | --- | --- |',
  ];
  rows(schema, '', out);
  return out;
}

export function renderEventJsonReference(): string {
  return [
    '# `event.json` and consumer files',
    '',
    '<!-- Generated from src/catalog/metadata-schemas.ts by test/docs/event-json-reference.ts; do not edit.',
    '     Rewrite with: EVGEN_UPDATE=1 npx vitest run test/docs/reference-docs.test.ts -->',
    '',
    'The catalog loader validates these files against the schemas this page is rendered from. A key',
    'not listed here is an error (`unknown-key`, with the closest allowed key as a hint), and every',
    'problem names the file and the JSON pointer of the offending value. The folder layout is in',
    '[the catalog guide](../guides/catalog.md).',
    '',
    '## `events/<domain>/<EventName>/event.json`',
    '',
    'Domains match `^[a-z][a-z0-9-]*$`, event names `^[A-Z][A-Za-z0-9]*$`; JavaScript globals',
    '(`Promise`, `Date`, …), reserved words and two events whose generated names clash are refused.',
    'An event with neither a `kafka` nor a `rabbitmq` block travels only through the in-process',
    'broker ([Kafka-only and RabbitMQ-only catalogs](../guides/single-transport-catalogs.md)).',
    '',
    ...table(eventJsonSchema),
    '',
    '```json',
    '{',
    '  "description": "A customer placed an order; it is now awaiting payment.",',
    '  "aggregate": "Order",',
    '  "aggregateId": "orderId",',
    '  "kafka": { "topic": "order.events" },',
    '  "rabbitmq": { "exchange": "order", "routingKey": "order.created" }',
    '}',
    '```',
    '',
    '## `events/_consumers/<name>.json`',
    '',
    "One file per consumer; `<name>` is the consumer's name (its queue, its Kafka group and retry",
    'topics, its inbox rows) and the name of its generated factory (`create<Name>Consumer`).',
    '',
    ...table(consumerJsonSchema),
    '',
    '```json',
    '{ "description": "Reserves stock for new orders.", "subscribes": ["order.OrderCreated", "order.OrderCancelled"], "inOrder": "every-version" }',
    '```',
    '',
  ].join('\n');
}
