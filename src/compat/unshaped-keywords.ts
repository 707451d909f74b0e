/**
 * Keywords Confluent's checker never compares, judged by meaning for policy `evgen` (the
 * `meaning` reading). Each is compared on the whole schema objects of a pair, whatever their
 * shapes:
 * - `format`: removing it widens; adding or changing it cannot be judged here (no Confluent
 *   difference type names it), so it is refused (see unjudged-change.ts).
 * - `contains`, `propertyNames`: "some item / every name matches S" only widens when the reader's
 *   S reads everything the writer's S accepted; anything else is refused. A reader's `maxContains`
 *   with a different `contains` is refused too (more items may match).
 * - `if`/`then`/`else`: with the same `if` (equivalent both ways), `then` and `else` are compared
 *   like any subschemas; a reader that adds or changes `if` is refused. A reader without them
 *   only dropped a constraint.
 * - `required` names the reader's `properties` do not declare: Confluent only looks at declared
 *   ones, but a reader requiring a name the writer did not require rejects data without it.
 */
import type { CompareSchemas } from './rules/shape-rule.js';
import type { DiffContext } from './diff-context.js';
import { isObject } from '../common/json-value.js';
import type { SchemaNode } from './schema-document.js';
import type { RuleInfo } from './rules/shape-rule.js';
import { acceptsEverything, referenceHops } from './schema-shape.js';
import { canonicalJson } from './canonical-json.js';

type Keywords = { readonly [keyword: string]: unknown };

/** Does `reader` read every value `writer` accepts (a trial, nothing recorded)? */
function reads(
  ctx: DiffContext,
  writer: SchemaNode,
  reader: SchemaNode,
  compareSchemas: CompareSchemas,
): boolean {
  const trial = ctx.sub();
  compareSchemas(trial, writer, reader);
  return trial.isCompatible();
}

function child(node: SchemaNode, value: unknown): SchemaNode {
  return node.doc.child(node, value);
}

function requiredOf(keywords: Keywords): Set<string> {
  const required = keywords['required'];
  return new Set(
    Array.isArray(required)
      ? required.filter((name): name is string => typeof name === 'string')
      : [],
  );
}

/**
 * Draft-07 and earlier ignore every keyword beside `$ref`; evgen's validators (ajv) apply them.
 * Where such keywords differ, the two meanings may part ways, so the change is not judged.
 */
const DRAFT_07_MEANING = { dialect: 'draft-07', reading: 'meaning' } as const;

function referenceWithSiblings(value: unknown): boolean {
  if (!isObject(value) || typeof value['$ref'] !== 'string') return false;
  const { $ref: _reference, ...siblings } = value;
  return !acceptsEverything(siblings, DRAFT_07_MEANING);
}

/**
 * True (and the change refused) when a draft-07 pair differs where a `$ref` has siblings: the
 * pair is not compared further, since everything found below would rest on one of two meanings.
 */
export function refusedReferenceSiblings(
  ctx: DiffContext,
  original: SchemaNode,
  update: SchemaNode,
): boolean {
  if (original.doc.dialect !== 'draft-07' || update.doc.dialect !== 'draft-07') return false;
  if (!referenceWithSiblings(original.value) && !referenceWithSiblings(update.value)) return false;
  if (acceptsEverything(update.value, update.doc)) return false;
  if (canonicalJson(original.value) === canonicalJson(update.value)) return false;
  ctx.addUnjudged('$ref');
  return true;
}

/**
 * The keywords beside each `$ref` of a chain that constrain without being a facet (`if`/`then`/
 * `else`; 2020-12 `dependencies`, which ajv applies): the chain is followed past them to its
 * target, so comparing the targets alone would drop them. Canonical JSON, one per hop.
 */
function conditionsAlong(node: SchemaNode): string[] {
  const conditions: string[] = [];
  for (const hop of referenceHops(node)) {
    const { $ref: _reference, ...siblings } = hop.value as Keywords;
    if (!acceptsEverything(siblings, { dialect: hop.doc.dialect, reading: 'meaning' }))
      conditions.push(canonicalJson(siblings));
  }
  return conditions;
}

/**
 * True (and the change refused) when the reader's `$ref` chain carries such keywords the writer's
 * chain does not carry word for word: whether the reader still accepts what the writer sent then
 * depends on them. The same keywords on both sides narrow both alike (unless they hold a `$ref`,
 * whose target may differ), so comparing the targets stays sound.
 */
export function refusedReferenceConditions(
  ctx: DiffContext,
  original: SchemaNode,
  update: SchemaNode,
): boolean {
  const reader = conditionsAlong(update);
  if (reader.length === 0) return false;
  const writer = new Set(conditionsAlong(original).filter((json) => !json.includes('"$ref"')));
  if (reader.every((json) => writer.has(json))) return false;
  ctx.addUnjudged('$ref');
  return true;
}

/** Whether this schema object alone lets `[]` through (nothing asks for items). */
function acceptsEmptyArray(keywords: Keywords): boolean {
  const minItems = keywords['minItems'];
  return (
    (minItems === undefined || minItems === 0) &&
    keywords['contains'] === undefined &&
    keywords['items'] !== false &&
    keywords['enum'] === undefined &&
    keywords['const'] === undefined
  );
}

export function compareUnshapedKeywords(
  ctx: DiffContext,
  original: SchemaNode,
  update: SchemaNode,
  compareSchemas: CompareSchemas,
): void {
  if (original.value === false || !isObject(update.value)) return;
  const writer: Keywords = isObject(original.value) ? original.value : {};
  const reader: Keywords = update.value;
  const dialect = update.doc.dialect;
  const present = (keywords: Keywords, keyword: string) =>
    keywords[keyword] !== undefined && !acceptsEverything(keywords[keyword], update.doc);

  if (reader['format'] !== undefined && reader['format'] !== writer['format'])
    ctx.addUnjudged('format');

  if (
    update.doc.dialect === '2020-12' &&
    reader['dependencies'] !== undefined &&
    canonicalJson(writer['dependencies']) !== canonicalJson(reader['dependencies'])
  )
    ctx.addUnjudged('dependencies');

  if (reader['contains'] !== undefined && writer['contains'] === undefined) {
    // `contains: {}` still asks for one item: an empty array the writer allowed now fails.
    if (dialect === '2020-12' && reader['minContains'] === 0) {
      // Asks for nothing.
    } else if (acceptsEmptyArray(writer)) ctx.add('MIN_CONTAINS_ADDED', 'contains');
    else ctx.addUnjudged('contains');
  }
  // `propertyNames: {}` asks for nothing.
  for (const keyword of ['contains', 'propertyNames']) {
    if (keyword === 'contains' ? reader[keyword] === undefined : !present(reader, keyword))
      continue;
    if (keyword === 'contains' && writer[keyword] === undefined) continue;
    if (
      writer[keyword] === undefined ||
      !reads(ctx, child(original, writer[keyword]), child(update, reader[keyword]), compareSchemas)
    )
      ctx.addUnjudged(keyword);
  }
  if (
    reader['maxContains'] !== undefined &&
    canonicalJson(writer['contains']) !== canonicalJson(reader['contains'])
  )
    ctx.addUnjudged('maxContains');

  if (
    reader['if'] !== undefined &&
    (reader['then'] !== undefined || reader['else'] !== undefined)
  ) {
    const sameIf =
      writer['if'] !== undefined &&
      reads(ctx, child(original, writer['if']), child(update, reader['if']), compareSchemas) &&
      reads(ctx, child(update, reader['if']), child(original, writer['if']), compareSchemas);
    if (!sameIf) ctx.addUnjudged('if');
    else
      for (const keyword of ['then', 'else'] as const) {
        if (reader[keyword] === undefined) continue;
        ctx.enter([keyword], () =>
          compareSchemas(
            ctx,
            child(original, writer[keyword] ?? true),
            child(update, reader[keyword]),
          ),
        );
      }
  }

  const declared = isObject(reader['properties']) ? reader['properties'] : {};
  const before = requiredOf(writer);
  for (const name of [...requiredOf(reader)].sort())
    if (!before.has(name) && !Object.hasOwn(declared, name))
      ctx.add('REQUIRED_ATTRIBUTE_ADDED', 'required', name);
}

/** This module as a rule (policy evgen only); refused changes are reported through addUnjudged. */
export const MEANING_ONLY_KEYWORDS_RULE: RuleInfo = {
  id: 'meaning-only-keywords',
  purpose:
    'Policy evgen: keywords Confluent never compares (format, contains, propertyNames, if/then/else, required names not declared) judged by meaning, or refused when they cannot be.',
  emits: ['REQUIRED_ATTRIBUTE_ADDED', 'MIN_CONTAINS_ADDED', 'COMBINED_TYPE_CHANGED'],
};
