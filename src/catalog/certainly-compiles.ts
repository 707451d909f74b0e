/**
 * Whether ajv is certain to compile a bundled schema, decided without ajv. Compiling every schema
 * with ajv was most of a cold `evgen check` (ajv generates and evaluates a validator's whole code
 * only to learn that it can). With the loader's options (`strict: false`, no meta-schema check on
 * compile, every file already checked against its meta-schema) ajv refuses a schema only for a
 * handful of reasons: a `pattern` or `patternProperties` key that is no `u`-flag RegExp, a `$ref`
 * it cannot resolve, an empty `enum`, `$id`/`id`/anchors it cannot place, `nullable`, a bad
 * `type`, and keyword shapes the meta-schema already rules out.
 *
 * This walks every schema position and answers true only when each keyword is one whose
 * compilation it understands fully, with a value of the shape ajv expects; anything else —
 * another keyword, an odd value, a `$ref` that is not a plain pointer to a schema position —
 * answers false, and the caller compiles with ajv as before. So a false is never a verdict, and
 * a true is only given where ajv compiles (`test/catalog/certainly-compiles.test.ts` holds it
 * to that on every schema the tests have).
 */
import type { Dialect } from './schema-dialect.js';

const TYPES: ReadonlySet<string> = new Set([
  'string',
  'number',
  'integer',
  'boolean',
  'object',
  'array',
  'null',
]);

/** Keywords ajv reads as annotations only: any value compiles. */
const ANNOTATIONS: ReadonlySet<string> = new Set([
  '$comment',
  'title',
  'description',
  'default',
  'examples',
  'deprecated',
  'readOnly',
  'writeOnly',
  'const',
]);

const NUMBERS: ReadonlySet<string> = new Set([
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
]);

const COUNTS: ReadonlySet<string> = new Set([
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
]);

/** Keywords whose value is one subschema, in both dialects. */
const SUBSCHEMA: ReadonlySet<string> = new Set([
  'additionalProperties',
  'propertyNames',
  'not',
  'contains',
]);

const COMBINERS: ReadonlySet<string> = new Set(['allOf', 'anyOf', 'oneOf']);

/** Keywords keywordCompiles judges by their value alone, without their pointer. */
const VALUE_ONLY: ReadonlySet<string> = new Set([
  ...ANNOTATIONS,
  ...NUMBERS,
  ...COUNTS,
  'type',
  'enum',
  'required',
  'uniqueItems',
  'multipleOf',
  'pattern',
  'format',
  '$ref',
  'dependentRequired',
]);

/** A JSON pointer ajv resolves the way this file does: no escapes, no percent-encoding. */
const PLAIN_POINTER = /^#(\/[A-Za-z0-9_.$-]+)*$/;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isCount = (value: unknown): boolean =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0;

function compilesAsRegExp(pattern: unknown): boolean {
  if (typeof pattern !== 'string') return false;
  try {
    new RegExp(pattern, 'u');
    return true;
  } catch {
    return false;
  }
}

/** True only when ajv (with the catalog loader's options) is sure to compile `schema`. */
export function certainlyCompiles(schema: unknown, dialect: Dialect): boolean {
  /** Pointers of every schema position (a `$ref` must land on one of them). */
  const positions = new Set<string>();
  const refs: string[] = [];
  const definitionsKey = dialect === '2020-12' ? '$defs' : 'definitions';

  const schemaAt = (value: unknown, pointer: string): boolean => {
    positions.add(pointer);
    if (typeof value === 'boolean') return true;
    if (!isRecord(value)) return false;
    for (const keyword of Object.keys(value)) {
      // Only keywords holding subschemas (and `$schema`) use their pointer: most build none.
      const at = VALUE_ONLY.has(keyword) ? '' : `${pointer}/${keyword}`;
      if (!keywordCompiles(value, keyword, value[keyword], at)) return false;
    }
    return true;
  };

  const schemaMap = (value: unknown, pointer: string, regExpKeys = false): boolean =>
    isRecord(value) &&
    Object.entries(value).every(
      ([key, child]) =>
        PLAIN_KEY.test(key) &&
        (!regExpKeys || compilesAsRegExp(key)) &&
        schemaAt(child, `${pointer}/${key}`),
    );

  const schemaList = (value: unknown, pointer: string): boolean =>
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((child, index) => schemaAt(child, `${pointer}/${index}`));

  const keywordCompiles = (
    parent: Record<string, unknown>,
    keyword: string,
    value: unknown,
    at: string,
  ): boolean => {
    if (ANNOTATIONS.has(keyword)) return true;
    if (NUMBERS.has(keyword)) return typeof value === 'number' && Number.isFinite(value);
    if (COUNTS.has(keyword)) return isCount(value);
    if (SUBSCHEMA.has(keyword)) return schemaAt(value, at);
    if (COMBINERS.has(keyword)) return schemaList(value, at);
    switch (keyword) {
      case '$schema':
        // Only the root's: ajv reads a nested one as a dialect switch.
        return at === '/$schema' && typeof value === 'string';
      case 'type':
        return typeof value === 'string'
          ? TYPES.has(value)
          : Array.isArray(value) &&
              value.length > 0 &&
              new Set(value).size === value.length &&
              value.every((type) => typeof type === 'string' && TYPES.has(type));
      case 'enum':
        return Array.isArray(value) && value.length > 0;
      case 'required':
        return Array.isArray(value) && value.every((name) => typeof name === 'string');
      case 'uniqueItems':
        return typeof value === 'boolean';
      case 'multipleOf':
        return typeof value === 'number' && Number.isFinite(value) && value > 0;
      case 'pattern':
        return compilesAsRegExp(value);
      case 'format':
        // Unknown names only warn with `strict: false`; names of Object's own members would be
        // looked up as formats.
        return (
          typeof value === 'string' &&
          !Object.prototype.hasOwnProperty.call(Object.prototype, value)
        );
      case 'properties':
        return schemaMap(value, at);
      case 'patternProperties':
        return schemaMap(value, at, true);
      case definitionsKey:
        return schemaMap(value, at);
      case 'items':
        if (Array.isArray(value)) return dialect === 'draft-07' && schemaList(value, at);
        return schemaAt(value, at);
      case 'additionalItems':
        return dialect === 'draft-07' && schemaAt(value, at);
      case 'prefixItems':
        return dialect === '2020-12' && schemaList(value, at);
      case 'if':
        return schemaAt(value, at);
      case 'then':
      case 'else':
        return 'if' in parent && schemaAt(value, at);
      case 'dependencies':
        return (
          dialect === 'draft-07' &&
          isRecord(value) &&
          Object.entries(value).every(([key, dependency]) =>
            Array.isArray(dependency)
              ? dependency.every((name) => typeof name === 'string')
              : schemaAt(dependency, `${at}/${key}`),
          )
        );
      case 'dependentRequired':
        return (
          dialect === '2020-12' &&
          isRecord(value) &&
          Object.values(value).every(
            (names) => Array.isArray(names) && names.every((name) => typeof name === 'string'),
          )
        );
      case 'dependentSchemas':
        return dialect === '2020-12' && schemaMap(value, at);
      case '$ref':
        if (typeof value !== 'string' || !PLAIN_POINTER.test(value)) return false;
        refs.push(value.slice(1));
        return true;
      default:
        return false;
    }
  };

  if (!schemaAt(schema, '')) return false;
  // Every reference names a schema position written above, so ajv resolves it to a schema this
  // walk accepted (no `$id` anywhere: the document is the only base).
  return refs.every((pointer) => positions.has(pointer));
}

/** Property, definition and pattern names that need no escaping in a pointer to them. */
const PLAIN_KEY = /^[^~/%]*$/;
