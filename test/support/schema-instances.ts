/**
 * Instances generated from a JSON Schema, for property-based tests ("for every instance the schema
 * allows, …"). Deterministic for a seed. The generator aims at values the schema accepts (required
 * properties, types, enums, bounds, formats, simple patterns, combinators, local `$ref`s) and, on
 * purpose, at near misses: objects with properties the schema does not declare, optional
 * properties left out, values for `not` and `if` subschemas drawn from the names they mention.
 * It does not promise validity: a test filters with a real validator and should assert that
 * enough instances passed for the property to mean something.
 *
 * Also here: `randomSchema`, a generator of schemas that mix the keywords whose meaning depends on
 * where they sit (`additionalProperties: false` under `not`, `oneOf`, `allOf`, `if`, `$ref`).
 */
import { parseRefPointer, resolveSegments } from '../../src/common/json-pointer.js';
import { isObject } from '../../src/common/json-value.js';

export type Random = () => number;

/** A small seeded PRNG (mulberry32): same seed, same sequence, on every machine. */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(random: Random, items: readonly T[]): T =>
  items[Math.floor(random() * items.length)]!;
const chance = (random: Random, p: number) => random() < p;
const between = (random: Random, min: number, max: number) =>
  min + Math.floor(random() * (max - min + 1));

export interface InstanceOptions {
  /** How many instances (default 50). */
  readonly count?: number;
  /** Seed of the generator (default 1). */
  readonly seed?: number;
  /** Probability of adding an undeclared property to a generated object (default 0.3). */
  readonly extraPropertyChance?: number;
}

/** `count` instances generated from `schema` (see the file comment). */
export function schemaInstances(schema: unknown, options: InstanceOptions = {}): unknown[] {
  const random = seededRandom(options.seed ?? 1);
  const generator = new InstanceGenerator(schema, random, options.extraPropertyChance ?? 0.3);
  return Array.from({ length: options.count ?? 50 }, () => generator.generate(schema, 0));
}

const FORMATS: Readonly<Record<string, readonly string[]>> = {
  uuid: ['0b7f8c1e-3c4a-4f7e-9a53-2c1d6e8f9a01', '6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f'],
  'date-time': ['2024-05-01T12:30:00Z', '2023-12-31T23:59:59.123+01:00'],
  date: ['2024-05-01', '1999-12-31'],
  time: ['12:30:00Z', '23:59:59+01:00'],
  email: ['someone@example.com', 'a.b@example.org'],
  uri: ['https://example.com/a', 'urn:isbn:0451450523'],
  hostname: ['example.com', 'localhost'],
  ipv4: ['192.0.2.1', '10.0.0.1'],
  ipv6: ['2001:db8::1', '::1'],
};

const DEPTH_LIMIT = 6;

class InstanceGenerator {
  constructor(
    private readonly root: unknown,
    private readonly random: Random,
    private readonly extraChance: number,
  ) {}

  /** A value for `schema`, which may be `true`, `false` or an object. */
  generate(schema: unknown, depth: number): unknown {
    if (schema === false) return this.anyValue(depth);
    if (!isObject(schema)) return this.anyValue(depth);
    if (depth > DEPTH_LIMIT) return this.scalarFor(schema);
    if (typeof schema.$ref === 'string') {
      const target = this.resolve(schema.$ref);
      if (target !== undefined) {
        const { $ref: _ref, ...rest } = schema;
        const base = this.generate(target, depth + 1);
        return Object.keys(rest).some((key) => key !== '$comment' && key !== 'description')
          ? this.merge(base, this.generate(rest, depth + 1))
          : base;
      }
    }
    if (schema.const !== undefined && chance(this.random, 0.9))
      return structuredClone(schema.const);
    if (Array.isArray(schema.enum) && schema.enum.length > 0 && chance(this.random, 0.9))
      return structuredClone(pick(this.random, schema.enum));
    if (isObject(schema.not) && chance(this.random, 0.5)) return this.nearValue(schema.not, depth);
    let value = this.ownValue(schema, depth);
    if (Array.isArray(schema.allOf))
      for (const branch of schema.allOf)
        value = this.merge(value, this.generate(branch, depth + 1));
    for (const keyword of ['anyOf', 'oneOf'] as const) {
      const branches = schema[keyword];
      if (Array.isArray(branches) && branches.length > 0)
        value = this.merge(value, this.generate(pick(this.random, branches), depth + 1));
    }
    if (isObject(schema.if) || isObject(schema.then) || isObject(schema.else)) {
      const branch = chance(this.random, 0.5) ? schema.then : schema.else;
      if (chance(this.random, 0.5) && isObject(schema.if))
        value = this.merge(value, this.generate(schema.if, depth + 1));
      if (branch !== undefined) value = this.merge(value, this.generate(branch, depth + 1));
    }
    return value;
  }

  private resolve(ref: string): unknown {
    const segments = parseRefPointer(ref);
    if (segments === undefined) return undefined;
    const target = resolveSegments(this.root, segments);
    return target.found ? target.value : undefined;
  }

  /** Objects merge property by property (the right side wins); otherwise the right side wins. */
  private merge(left: unknown, right: unknown): unknown {
    if (isObject(left) && isObject(right)) return { ...left, ...right };
    return right === undefined ? left : right;
  }

  /** A value from the schema's own keywords (type, properties, items, bounds). */
  private ownValue(schema: Record<string, unknown>, depth: number): unknown {
    const type = this.typeOf(schema);
    switch (type) {
      case 'object':
        return this.objectFor(schema, depth);
      case 'array':
        return this.arrayFor(schema, depth);
      case undefined:
        return undefined;
      default:
        return this.scalarOfType(schema, type);
    }
  }

  private typeOf(schema: Record<string, unknown>): string | undefined {
    const declared = schema.type;
    if (typeof declared === 'string') return declared;
    if (Array.isArray(declared) && declared.length > 0)
      return pick(this.random, declared) as string;
    if (
      isObject(schema.properties) ||
      Array.isArray(schema.required) ||
      isObject(schema.patternProperties)
    )
      return 'object';
    if (schema.items !== undefined || Array.isArray(schema.prefixItems)) return 'array';
    if (typeof schema.minLength === 'number' || typeof schema.pattern === 'string') return 'string';
    if (typeof schema.minimum === 'number' || typeof schema.maximum === 'number') return 'number';
    return undefined;
  }

  private objectFor(schema: Record<string, unknown>, depth: number): Record<string, unknown> {
    const required = new Set(
      Array.isArray(schema.required)
        ? schema.required.filter((name) => typeof name === 'string')
        : [],
    );
    const properties = isObject(schema.properties) ? schema.properties : {};
    const entries: [string, unknown][] = [];
    for (const [name, subschema] of Object.entries(properties)) {
      if (!required.has(name) && !chance(this.random, 0.7)) continue;
      entries.push([name, this.generate(subschema, depth + 1)]);
    }
    for (const name of required)
      if (!Object.hasOwn(properties, name)) entries.push([name, this.anyValue(depth + 1)]);
    this.addDependents(schema, properties, entries, depth);
    if (chance(this.random, this.extraChance)) {
      const extra = isObject(schema.additionalProperties) ? schema.additionalProperties : true;
      entries.push([
        pick(this.random, ['extra', 'z', 'note', 'k']),
        this.generate(extra, depth + 1),
      ]);
    }
    return Object.fromEntries(entries.filter(([, value]) => value !== undefined));
  }

  /**
   * An array: tuple positions first (2020-12 `prefixItems`, draft-07 `items` array), then rest
   * items. Tuples are sometimes cut short (fewer items than positions is valid) and sometimes run
   * past their positions, so a closed or changed rest is exercised; a `contains` value is put in
   * (`minContains` times) at a random place.
   */
  /**
   * Most of the time, the names a present property makes required (`dependentRequired`, array
   * `dependencies`, and the `required` of `dependentSchemas`/schema `dependencies`).
   */
  private addDependents(
    schema: Record<string, unknown>,
    properties: Record<string, unknown>,
    entries: [string, unknown][],
    depth: number,
  ): void {
    const present = new Set(entries.map(([name]) => name));
    for (const keyword of ['dependencies', 'dependentRequired', 'dependentSchemas']) {
      const map = schema[keyword];
      if (!isObject(map)) continue;
      for (const [trigger, dependency] of Object.entries(map)) {
        if (!present.has(trigger) || !chance(this.random, 0.8)) continue;
        const names = Array.isArray(dependency)
          ? dependency
          : isObject(dependency) && Array.isArray(dependency.required)
            ? dependency.required
            : [];
        for (const name of names) {
          if (typeof name !== 'string' || present.has(name)) continue;
          present.add(name);
          entries.push([
            name,
            Object.hasOwn(properties, name)
              ? this.generate(properties[name], depth + 1)
              : this.anyValue(depth + 1),
          ]);
        }
      }
    }
  }

  private arrayFor(schema: Record<string, unknown>, depth: number): unknown[] {
    const prefix = Array.isArray(schema.prefixItems)
      ? schema.prefixItems
      : Array.isArray(schema.items)
        ? schema.items
        : [];
    const rest = Array.isArray(schema.items) ? schema.additionalItems : schema.items;
    const min = typeof schema.minItems === 'number' ? schema.minItems : 0;
    const max = typeof schema.maxItems === 'number' ? schema.maxItems : Math.max(min, 3);
    let length = between(this.random, min, Math.min(max, min + 3));
    if (prefix.length > 0) {
      const closed = rest === false;
      const shape = pick(this.random, ['full', 'full', 'short', closed ? 'full' : 'long', 'long']);
      length =
        shape === 'full'
          ? prefix.length
          : shape === 'short'
            ? between(this.random, 0, prefix.length - 1)
            : prefix.length + between(this.random, 1, 2);
      length = Math.max(length, min);
    }
    const items = Array.from({ length }, (_, index) =>
      index < prefix.length
        ? this.generate(prefix[index], depth + 1)
        : this.generate(rest ?? {}, depth + 1),
    );
    if (schema.contains !== undefined && schema.contains !== false && chance(this.random, 0.8)) {
      const times = typeof schema.minContains === 'number' ? Math.max(1, schema.minContains) : 1;
      for (let n = 0; n < times; n += 1) {
        const value = this.generate(schema.contains, depth + 1);
        const at = between(this.random, 0, items.length);
        // Inside a tuple, replace a position; past it, add an item.
        if (at < prefix.length && chance(this.random, 0.5)) items[at] = value;
        else items.splice(at, 0, value);
      }
    }
    return items.map((value) => (value === undefined ? null : value));
  }

  private scalarFor(schema: Record<string, unknown>): unknown {
    const type = this.typeOf(schema);
    return type === undefined || type === 'object' || type === 'array'
      ? null
      : this.scalarOfType(schema, type);
  }

  private scalarOfType(schema: Record<string, unknown>, type: string): unknown {
    switch (type) {
      case 'string':
        return this.stringFor(schema);
      case 'integer':
      case 'number':
        return this.numberFor(schema, type === 'integer');
      case 'boolean':
        return chance(this.random, 0.5);
      case 'null':
        return null;
      default:
        return null;
    }
  }

  private stringFor(schema: Record<string, unknown>): string {
    if (typeof schema.format === 'string' && FORMATS[schema.format] !== undefined)
      return pick(this.random, FORMATS[schema.format]!);
    if (typeof schema.pattern === 'string') {
      const matching = stringMatching(schema.pattern, this.random);
      if (matching !== undefined) return matching;
    }
    const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
    const max = typeof schema.maxLength === 'number' ? schema.maxLength : Math.max(min, 12);
    const length = between(this.random, min, Math.min(max, min + 8));
    return Array.from({ length }, () => pick(this.random, Array.from('abcxyzAB09 -'))).join('');
  }

  private numberFor(schema: Record<string, unknown>, integer: boolean): number {
    const num = (key: string) => (typeof schema[key] === 'number' ? schema[key] : undefined);
    const exclusiveMin = num('exclusiveMinimum');
    const exclusiveMax = num('exclusiveMaximum');
    const low = num('minimum') ?? (exclusiveMin !== undefined ? exclusiveMin + 1 : -1000);
    const high = num('maximum') ?? (exclusiveMax !== undefined ? exclusiveMax - 1 : low + 2000);
    const multipleOf = num('multipleOf');
    let value =
      integer || chance(this.random, 0.5)
        ? between(this.random, Math.ceil(low), Math.floor(high))
        : low + this.random() * (high - low);
    if (multipleOf !== undefined && multipleOf > 0)
      value = Math.ceil(low / multipleOf) * multipleOf;
    return value;
  }

  /**
   * A value "around" a schema used as a test (`not`): sometimes one it accepts, sometimes the same
   * with an undeclared property, so both sides of the test are exercised.
   */
  private nearValue(schema: Record<string, unknown>, depth: number): unknown {
    const value = this.generate(schema, depth + 1);
    if (isObject(value) && chance(this.random, 0.6)) return { ...value, z: 2 };
    return chance(this.random, 0.2) ? this.anyValue(depth) : value;
  }

  /** Any JSON value, small. */
  private anyValue(depth: number): unknown {
    const kinds =
      depth > DEPTH_LIMIT
        ? ['string', 'number', 'null']
        : ['string', 'number', 'null', 'object', 'array', 'boolean'];
    switch (pick(this.random, kinds)) {
      case 'string':
        return pick(this.random, ['', 'x', 'hello']);
      case 'number':
        return pick(this.random, [0, 1, -3, 2.5]);
      case 'boolean':
        return chance(this.random, 0.5);
      case 'object':
        return { [pick(this.random, ['k', 'z', 'a'])]: this.anyValue(depth + 1) };
      case 'array':
        return [this.anyValue(depth + 1)];
      default:
        return null;
    }
  }
}

/**
 * A string matching a simple anchored pattern (literals, `[...]` classes with ranges, `\d`, `\w`,
 * `.`, and the quantifiers `?`, `*`, `+`, `{n}`, `{m,n}`); undefined for anything more complex.
 */
export function stringMatching(pattern: string, random: Random): string | undefined {
  if (!pattern.startsWith('^') || !pattern.endsWith('$')) return undefined;
  const body = pattern.slice(1, -1);
  let out = '';
  let index = 0;
  while (index < body.length) {
    let choices: string[];
    const char = body[index]!;
    if (char === '[') {
      const end = body.indexOf(']', index + 1);
      if (end < 0) return undefined;
      choices = classMembers(body.slice(index + 1, end));
      index = end + 1;
    } else if (char === '\\') {
      const escaped = body[index + 1];
      choices =
        escaped === 'd'
          ? Array.from('0123456789')
          : escaped === 'w'
            ? Array.from('abcXYZ019_')
            : escaped !== undefined && !/[a-zA-Z]/.test(escaped)
              ? [escaped]
              : [];
      index += 2;
    } else if (char === '.') {
      choices = Array.from('abc123');
      index += 1;
    } else if ('()|*+?{}'.includes(char)) {
      return undefined;
    } else {
      choices = [char];
      index += 1;
    }
    if (choices.length === 0) return undefined;
    let min = 1;
    let max = 1;
    const quantifier = body[index];
    if (quantifier === '?' || quantifier === '*' || quantifier === '+') {
      [min, max] = quantifier === '?' ? [0, 1] : quantifier === '*' ? [0, 3] : [1, 4];
      index += 1;
    } else if (quantifier === '{') {
      const end = body.indexOf('}', index);
      const match = /^(\d+)(?:,(\d*))?$/.exec(body.slice(index + 1, end));
      if (end < 0 || match === null) return undefined;
      min = Number(match[1]);
      max = match[2] === undefined ? min : match[2] === '' ? min + 3 : Number(match[2]);
      index = end + 1;
    }
    const count = between(random, min, Math.min(max, min + 4));
    for (let n = 0; n < count; n += 1) out += pick(random, choices);
  }
  return out;
}

function classMembers(spec: string): string[] {
  if (spec.startsWith('^')) return [];
  const members: string[] = [];
  for (let index = 0; index < spec.length; index += 1) {
    const from = spec[index]!;
    if (spec[index + 1] === '-' && index + 2 < spec.length) {
      const to = spec[index + 2]!;
      for (let code = from.charCodeAt(0); code <= to.charCodeAt(0); code += 1)
        members.push(String.fromCharCode(code));
      index += 2;
    } else if (from === '\\') {
      const escaped = spec[index + 1];
      if (escaped === 'd') members.push(...Array.from('0123456789'));
      else if (escaped !== undefined) members.push(escaped);
      index += 1;
    } else {
      members.push(from);
    }
  }
  return members;
}

export interface RandomSchemaOptions {
  readonly dialect: 'draft-07' | '2020-12';
}

const DIALECT_URI = {
  'draft-07': 'http://json-schema.org/draft-07/schema#',
  '2020-12': 'https://json-schema.org/draft/2020-12/schema',
} as const;

/**
 * A random object schema of bounded depth mixing properties, `required`, explicit
 * `additionalProperties: false`, `not`, `allOf`, `anyOf`, `oneOf`, `if`/`then`/`else`, and
 * `$ref`s to a shared definition (also from inside `not`).
 */
export function randomSchema(
  random: Random,
  options: RandomSchemaOptions,
): Record<string, unknown> {
  const defsKeyword = options.dialect === '2020-12' ? '$defs' : 'definitions';
  const names = ['a', 'b', 'k', 'n'];
  const leaf = (): Record<string, unknown> =>
    pick(random, [
      { type: 'string' },
      { type: 'integer', minimum: 0 },
      { type: 'boolean' },
      { enum: ['x', 'y'] },
      {},
    ]);
  const objectSchema = (depth: number): Record<string, unknown> => {
    const properties: Record<string, unknown> = {};
    for (const name of names)
      if (chance(random, 0.5))
        properties[name] = depth > 0 && chance(random, 0.4) ? node(depth - 1) : leaf();
    const schema: Record<string, unknown> = { type: 'object', properties };
    const declared = Object.keys(properties);
    if (declared.length > 0 && chance(random, 0.4)) schema.required = [pick(random, declared)];
    if (chance(random, 0.3)) schema.additionalProperties = false;
    return schema;
  };
  const node = (depth: number): Record<string, unknown> => {
    const kind = pick(random, ['object', 'object', 'not', 'allOf', 'anyOf', 'oneOf', 'if', 'ref']);
    switch (kind) {
      case 'not':
        return {
          not: chance(random, 0.3) ? { $ref: `#/${defsKeyword}/shared` } : objectSchema(0),
        };
      case 'allOf':
      case 'anyOf':
      case 'oneOf': {
        const parent = chance(random, 0.5) ? objectSchema(0) : {};
        return { ...parent, [kind]: [objectSchema(depth > 0 ? depth - 1 : 0), objectSchema(0)] };
      }
      case 'if':
        return {
          type: 'object',
          if: objectSchema(0),
          then: objectSchema(0),
          ...(chance(random, 0.5) ? { else: objectSchema(0) } : {}),
        };
      case 'ref':
        return { $ref: `#/${defsKeyword}/shared` };
      default:
        return objectSchema(depth);
    }
  };
  const root = objectSchema(2);
  const properties = root.properties as Record<string, unknown>;
  properties.x = node(2);
  properties.y = node(1);
  return {
    $schema: DIALECT_URI[options.dialect],
    [defsKeyword]: { shared: objectSchema(0) },
    ...root,
  };
}
