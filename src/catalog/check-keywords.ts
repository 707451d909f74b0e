/**
 * Catches typos the meta-schema lets through: JSON Schema ignores unknown keywords, so
 * `"requried": [...]` or `"format": "uuidd"` would silently weaken validation. Unknown keywords
 * and formats are errors; custom annotations must start with `x-`.
 */
import { catastrophicPatternReason } from './catastrophic-pattern.js';
import { linearPatternError } from '../runtime/linear-pattern.js';
import type { CatalogProblem } from './catalog-error.js';
import { suggestion } from './did-you-mean.js';
import { pointerSegment } from '../common/json-pointer.js';
import { isObject } from '../common/json-value.js';
import type { Dialect } from './schema-dialect.js';
import { walkSchema } from '../schema/walk.js';

const COMMON = [
  '$comment',
  '$defs',
  '$id',
  '$ref',
  '$schema',
  'additionalItems',
  'additionalProperties',
  'allOf',
  'anyOf',
  'const',
  'contains',
  'contentEncoding',
  'contentMediaType',
  'default',
  'definitions',
  'dependencies',
  'deprecated',
  'description',
  'else',
  'enum',
  'examples',
  'exclusiveMaximum',
  'exclusiveMinimum',
  'format',
  'if',
  'items',
  'maxItems',
  'maxLength',
  'maxProperties',
  'maximum',
  'minItems',
  'minLength',
  'minProperties',
  'minimum',
  'multipleOf',
  'not',
  'oneOf',
  'pattern',
  'patternProperties',
  'properties',
  'propertyNames',
  'readOnly',
  'required',
  'then',
  'title',
  'type',
  'uniqueItems',
  'writeOnly',
];
const ONLY_2020 = [
  '$anchor',
  '$dynamicAnchor',
  '$dynamicRef',
  '$vocabulary',
  'contentSchema',
  'dependentRequired',
  'dependentSchemas',
  'maxContains',
  'minContains',
  'prefixItems',
  'unevaluatedItems',
  'unevaluatedProperties',
];
/** json-schema-to-typescript's extensions: accepted, and dropped by the targets (never emitted as code). */
const TOOL_EXTENSIONS = ['tsEnumNames', 'tsName', 'tsType'];

const KNOWN: Record<Dialect, ReadonlySet<string>> = {
  'draft-07': new Set([...COMMON, ...TOOL_EXTENSIONS]),
  '2020-12': new Set([...COMMON, ...ONLY_2020, ...TOOL_EXTENSIONS]),
};

/** Property names the generated code cannot carry, and why. */
const RESERVED_PROPERTY_NAMES: ReadonlyMap<string, string> = new Map([
  ['__proto__', 'in JavaScript object literals and validators it sets the prototype instead'],
  [
    'hasOwnProperty',
    'it shadows Object.prototype.hasOwnProperty, which json-schema-to-typescript calls on property maps',
  ],
]);

export function checkKeywords(
  schema: unknown,
  dialect: Dialect,
  knownFormats: readonly string[],
  file: string,
): CatalogProblem[] {
  const problems: CatalogProblem[] = [];
  const known = KNOWN[dialect];
  // The position's pointer is read only for a problem: building it per node is a walk's main cost.
  walkSchema(schema, (node, position) => {
    for (const keyword of Object.keys(node)) {
      if (known.has(keyword) || keyword.startsWith('x-')) continue;
      const only2020 = dialect === 'draft-07' && ONLY_2020.includes(keyword);
      problems.push({
        code: 'unknown-keyword',
        file,
        pointer: `${position.pointer}/${pointerSegment(keyword)}`,
        message: only2020
          ? `"${keyword}" is a 2020-12 keyword; draft-07 ignores it`
          : `unknown keyword "${keyword}"`,
        hint: only2020
          ? 'declare "$schema": "https://json-schema.org/draft/2020-12/schema" or use the draft-07 equivalent'
          : `${suggestion(keyword, [...known], 'remove it')} (custom annotations must start with "x-")`,
      });
    }
    for (const [name, why] of RESERVED_PROPERTY_NAMES) {
      if (
        isObject(node.properties) &&
        Object.prototype.hasOwnProperty.call(node.properties, name)
      ) {
        problems.push({
          code: 'reserved-property-name',
          file,
          pointer: `${position.pointer}/properties/${name}`,
          message: `a property named "${name}" cannot be generated: ${why}`,
          hint: 'rename the property',
        });
      }
    }
    // ajv compiles patterns with the u flag and names no place when one fails: find it here.
    // Each pattern's place below this node; the node's pointer is built only for a problem.
    const patterns: [string, string][] =
      typeof node.pattern === 'string' ? [['/pattern', node.pattern]] : [];
    if (isObject(node.patternProperties)) {
      for (const key of Object.keys(node.patternProperties))
        patterns.push([`/patternProperties/${pointerSegment(key)}`, key]);
    }
    for (const [below, source] of patterns) {
      const { error, catastrophe, notLinear } = patternVerdict(source);
      if (error === undefined) {
        if (notLinear !== undefined)
          problems.push({
            code: 'pattern-not-linear',
            file,
            pointer: `${position.pointer}${below}`,
            message: `${JSON.stringify(source)} cannot run on the validators' linear-time engine: ${notLinear}`,
            hint: 'validators match patterns with RE2 so that no value can stall a consumer; rewrite the pattern without back references or lookahead (lookbehind without capturing groups is fine), or check that condition in the handler',
          });
        if (catastrophe !== undefined)
          problems.push({
            code: 'catastrophic-pattern',
            file,
            pointer: `${position.pointer}${below}`,
            message: `${JSON.stringify(source)} is refused: ${catastrophe}; one crafted value could stall every consumer`,
            hint: 'make the repetition unambiguous: no loop directly inside a loop, no alternatives that start alike (e.g. ^[a-z]+(-[a-z]+)*$ instead of ^([a-z]+-?)*$)',
          });
        continue;
      }
      problems.push({
        code: 'invalid-schema',
        file,
        pointer: `${position.pointer}${below}`,
        message: `${JSON.stringify(source)} is not a valid regular expression (${error})`,
        hint: 'use an ECMAScript regular expression (unicode mode); escape literal characters such as * + ? ( ) [ ] with a backslash',
      });
    }
    if (typeof node.format === 'string' && !knownFormats.includes(node.format)) {
      problems.push({
        code: 'unknown-format',
        file,
        pointer: `${position.pointer}/format`,
        message: `unknown format ${JSON.stringify(node.format)}; it would not be validated`,
        hint: suggestion(node.format, knownFormats, `use one of ${knownFormats.join(', ')}`),
      });
    }
  });
  return problems;
}

/**
 * What is wrong with a pattern, remembered by its text: a catalog repeats the same patterns in
 * every version of every event, and parsing one for catastrophic backtracking is not cheap.
 */
interface PatternVerdict {
  /** Not a unicode-mode regular expression. */
  error?: string;
  /** Backtracks exponentially in JavaScript (and other backtracking engines reading the catalog). */
  catastrophe?: string;
  /** What RE2, the generated validators' engine, cannot express (back references, lookahead). */
  notLinear?: string;
}
const patternVerdicts = new Map<string, PatternVerdict>();
const MAX_REMEMBERED_PATTERNS = 10_000;

function patternVerdict(source: string): PatternVerdict {
  let verdict = patternVerdicts.get(source);
  if (verdict === undefined) {
    const error = regexError(source);
    const catastrophe = error === undefined ? catastrophicPatternReason(source) : undefined;
    const notLinear = error === undefined ? linearPatternError(source) : undefined;
    verdict = {
      ...(error !== undefined ? { error } : {}),
      ...(catastrophe !== undefined ? { catastrophe } : {}),
      ...(notLinear !== undefined ? { notLinear } : {}),
    };
    if (patternVerdicts.size >= MAX_REMEMBERED_PATTERNS) patternVerdicts.clear();
    patternVerdicts.set(source, verdict);
  }
  return verdict;
}

/** Why `source` does not compile as a unicode-mode regular expression (as ajv compiles it), or undefined. */
function regexError(source: string): string | undefined {
  try {
    new RegExp(source, 'u');
    return undefined;
  } catch (error) {
    return (error as Error).message.replace(/^Invalid regular expression: \/.*\/u?: /s, '');
  }
}
