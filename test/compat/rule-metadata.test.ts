/**
 * Compatibility rules carry metadata (id, purpose, the difference types they report), and it is
 * true: together the rules report every one of Confluent's 132 difference types except the two
 * that come from registry metadata, each rule's source names exactly the types it declares, and
 * every type has a hint of its own in both directions.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ALL_DIFFERENCE_TYPES, type DifferenceType } from 'evgen';
import { COMPAT_RULES, NOT_REPORTED } from '../../src/compat/rule-catalog.js';
import { HINT_RULES, hintRuleFor } from '../../src/compat/rules/hints.js';
import type { RuleInfo } from '../../src/compat/rules/shape-rule.js';

const COMPAT_DIR = new URL('../../src/compat/', import.meta.url);
const TYPES = new Set<string>(ALL_DIFFERENCE_TYPES);

function isRule(value: unknown): value is RuleInfo {
  return typeof value === 'object' && value !== null && 'id' in value && 'emits' in value;
}

/** Difference type names written as string literals in a source file. */
function namedIn(source: string): Set<string> {
  return new Set(
    [...source.matchAll(/'([A-Z][A-Z_]+)'/g)].map((m) => m[1]!).filter((name) => TYPES.has(name)),
  );
}

describe('compatibility rule metadata', () => {
  it('every rule has a unique kebab-case id and a purpose', () => {
    const ids = COMPAT_RULES.map((rule) => rule.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const rule of COMPAT_RULES) {
      expect(rule.id).toMatch(/^[a-z]+(-[a-z]+)*$/);
      expect(rule.purpose.length, rule.id).toBeGreaterThan(30);
    }
  });

  it('the rules report all 132 difference types, except the two taken from registry metadata', () => {
    const emitted = new Set(COMPAT_RULES.flatMap((rule) => rule.emits));
    const notReported = Object.keys(NOT_REPORTED) as DifferenceType[];
    expect(ALL_DIFFERENCE_TYPES).toHaveLength(132);
    expect(notReported.sort()).toEqual([
      'RESERVED_PROPERTY_CONFLICTS_WITH_PROPERTY',
      'RESERVED_PROPERTY_REMOVED',
    ]);
    expect(notReported.filter((type) => emitted.has(type))).toEqual([]);
    expect(ALL_DIFFERENCE_TYPES.filter((type) => !emitted.has(type)).sort()).toEqual(notReported);
  });

  it("each rule's file names only the types its rules declare (rules/: exactly those)", async () => {
    const files = [
      ...readdirSync(new URL('rules/', COMPAT_DIR))
        .filter((name) => !['difference-types.ts', 'hints.ts', 'index.ts'].includes(name))
        .map((name) => `rules/${name}`),
      'compare-schemas.ts',
      'unshaped-keywords.ts',
    ];
    const seen = new Set<string>();
    for (const file of files) {
      const url = new URL(file, COMPAT_DIR);
      const rules = Object.values(
        (await import(fileURLToPath(url))) as Record<string, unknown>,
      ).filter(isRule);
      for (const rule of rules) seen.add(rule.id);
      const declared = [...new Set<string>(rules.flatMap((rule) => rule.emits))].sort();
      const named = [...namedIn(readFileSync(url, 'utf8'))].sort();
      expect(
        named.filter((type) => !declared.includes(type)),
        `${file} names undeclared types`,
      ).toEqual([]);
      // Outside rules/, a rule may also report through a context helper (an unjudged change).
      if (file.startsWith('rules/')) expect(named, file).toEqual(declared);
    }
    // Every rule of the catalog lives in one of the files looked at.
    expect(COMPAT_RULES.map((rule) => rule.id).filter((id) => !seen.has(id))).toEqual([]);
  });

  it('every difference type has a specific hint in both directions', () => {
    const generic = HINT_RULES[HINT_RULES.length - 1]!;
    const fallbacks = (['backward', 'forward'] as const).flatMap((direction) =>
      ALL_DIFFERENCE_TYPES.filter((type) => hintRuleFor(type, direction) === generic).map(
        (type) => `${direction}:${type}`,
      ),
    );
    expect(fallbacks).toEqual([]);
  });
});
