/**
 * Hostile inputs for the loader, the generator and the compatibility checker, each small on disk
 * (≤ 1 MB) but built to make naive code quadratic, exponential or deeply recursive. Each case is
 * one event `shop/Hostile` with two versions (v2 a slightly changed copy of v1, so `check` must
 * really compare them) whose payload carries the hostile part under the property `data`.
 * Shared by the tests (outcomes) and test/bench/hostile.bench.ts (time and peak memory).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

type Schema = Record<string, unknown>;

export interface HostileCase {
  readonly name: string;
  /** The hostile part, placed at `/properties/data`, per version. */
  readonly data: (version: 1 | 2) => Schema;
  /** Definitions the hostile part refers to (`#/definitions/…`), per version. */
  readonly definitions?: (version: 1 | 2) => Record<string, Schema>;
}

const objectBranch = (index: number, changed: boolean): Schema => ({
  type: 'object',
  properties: {
    kind: { const: `k${index}` },
    ...Object.fromEntries(
      Array.from({ length: 8 }, (_, p) => [
        `p${p}`,
        { type: p === 3 && changed ? 'integer' : 'number', maximum: 100 + p },
      ]),
    ),
  },
  required: ['kind'],
});

/** n object branches under one combinator; in v2 the last branch narrows one property. */
export function unionCase(keyword: 'anyOf' | 'oneOf', branches: number): HostileCase {
  return {
    name: `${keyword} of ${branches} object branches`,
    data: (version) => ({
      [keyword]: Array.from({ length: branches }, (_, i) =>
        objectBranch(i, version === 2 && i === branches - 1),
      ),
    }),
  };
}

function anyOfTree(depth: number, seed: number): Schema {
  if (depth === 0) return { type: 'object', properties: { [`x${seed}`]: { type: 'string' } } };
  return { anyOf: [anyOfTree(depth - 1, seed * 2), anyOfTree(depth - 1, seed * 2 + 1)] };
}

/** A binary anyOf tree: 2^depth leaves; v2 is a different tree of the same shape. */
export function anyOfTreeCase(depth: number): HostileCase {
  return {
    name: `binary anyOf tree of depth ${depth}`,
    data: (version) => anyOfTree(depth, version === 1 ? 1 : 3),
  };
}

/** `d0 → d1 → … → d(n-1)` by bare `$ref`s, ending in a string (v1) or a number (v2). */
export function refChainCase(length: number): HostileCase {
  return {
    name: `$ref chain of ${length}`,
    data: () => ({ $ref: '#/definitions/d0' }),
    definitions: (version) =>
      Object.fromEntries(
        Array.from({ length }, (_, i) => [
          `d${i}`,
          i === length - 1
            ? { type: version === 1 ? 'string' : 'number' }
            : { $ref: `#/definitions/d${i + 1}` },
        ]),
      ),
  };
}

/** n object schemas each holding the next in property `n`, the last holding the first. */
export function refRingCase(length: number): HostileCase {
  return {
    name: `$ref ring of ${length} object schemas`,
    data: () => ({ $ref: '#/definitions/d0' }),
    definitions: (version) =>
      Object.fromEntries(
        Array.from({ length }, (_, i) => [
          `d${i}`,
          {
            type: 'object',
            properties: {
              n: { $ref: `#/definitions/d${(i + 1) % length}` },
              ...(version === 2 && i === length - 1 ? { extra: { type: 'string' } } : {}),
            },
          },
        ]),
      ),
  };
}

/** A string enum of n values; v2 drops the last value. */
export function bigEnumCase(values: number): HostileCase {
  return {
    name: `enum of ${values} values`,
    data: (version) => ({
      type: 'string',
      enum: Array.from({ length: version === 1 ? values : values - 1 }, (_, i) => `v${i}`),
    }),
  };
}

/** Every hostile input the security issue listed, at the sizes it listed. */
export function issueCases(): HostileCase[] {
  return [
    unionCase('anyOf', 400),
    unionCase('anyOf', 1000),
    unionCase('oneOf', 1000),
    anyOfTreeCase(10),
    refChainCase(1200),
    refRingCase(2000),
    bigEnumCase(100_000),
  ];
}

/** The payload schema of one version. */
export function hostileSchema(hostile: HostileCase, version: 1 | 2): Schema {
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    properties: { orderId: { type: 'string' }, data: hostile.data(version) },
    required: ['orderId'],
    ...(hostile.definitions === undefined ? {} : { definitions: hostile.definitions(version) }),
  };
}

/**
 * Writes `<root>/events/shop/Hostile/{event.json,v1.schema.json,v2.schema.json}` (mode BACKWARD,
 * so v2 is compared with v1). Returns the events folder.
 */
export function writeHostileCatalog(root: string, hostile: HostileCase): string {
  const events = join(root, 'events');
  const folder = join(events, 'shop', 'Hostile');
  mkdirSync(folder, { recursive: true });
  writeFileSync(
    join(folder, 'event.json'),
    `${JSON.stringify({
      description: 'Hostile input.',
      aggregate: 'Order',
      aggregateId: 'orderId',
      compatibility: 'BACKWARD',
      kafka: { topic: 'shop.events' },
      rabbitmq: { exchange: 'shop', routingKey: 'shop.hostile' },
    })}\n`,
  );
  for (const version of [1, 2] as const)
    writeFileSync(
      join(folder, `v${version}.schema.json`),
      `${JSON.stringify(hostileSchema(hostile, version))}\n`,
    );
  return events;
}
