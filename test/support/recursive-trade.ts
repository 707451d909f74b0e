/**
 * The shape of the slowest of Confluent's own held-out pairs (its SchemaDiffTest
 * `testRecursiveOneOfUnionDetectsIncompatibleChange`): twelve product kinds, each with two
 * `oneOf` unions of `$ref`s to all twelve, under a root union of all twelve; the update changes
 * one kind's `id` from string to number. Every union pair is recursive.
 */
import type { JsonSchema } from '../../src/catalog/model.js';

export const TRADE_KINDS = [
  'Asset',
  'Basket',
  'Swap',
  'Bond',
  'Option',
  'Future',
  'Forward',
  'Loan',
  'Repo',
  'Equity',
  'Index',
  'CommodityLeg',
] as const;

/** The trade schema with the `Asset` kind's `id` of type `assetIdType`. */
export function recursiveTrade(assetIdType: string): JsonSchema {
  const anyKind = () => ({ oneOf: TRADE_KINDS.map((kind) => ({ $ref: `#/definitions/${kind}` })) });
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'Trade',
    type: 'object',
    additionalProperties: true,
    definitions: Object.fromEntries(
      TRADE_KINDS.map((kind) => [
        kind,
        {
          type: 'object',
          properties: {
            id: { type: kind === 'Asset' ? assetIdType : 'string' },
            underlying: anyKind(),
            referenceProduct: anyKind(),
          },
        },
      ]),
    ),
    properties: { tradeId: { type: 'string' }, product: anyKind() },
  };
}
