/**
 * Child of test/codegen/linear-pattern-validators.test.ts: compiles the standalone validators of a
 * schema whose patterns backtrack polynomially (as `evgen build` does), prints `ready`, then runs
 * each against a 1,000-character value and prints one JSON line per pattern. The parent gives the
 * matching a few seconds: JavaScript's backtracking engine needs more than 20 s for each.
 */
import { createRequire } from 'node:module';
import { standaloneValidators } from '../../src/codegen/targets/validators.js';
import { linearPattern } from '../../src/runtime/linear-pattern.js';

export const HOSTILE_PATTERNS: readonly { pattern: string; value: string }[] = [
  { pattern: '^a*a*a*a*a*b$', value: 'a'.repeat(1_000) },
  { pattern: '(.*a){3}x', value: 'a'.repeat(1_000) },
  { pattern: '\\s*\\s*$', value: `${' '.repeat(999)}x` },
  { pattern: '\\d+\\d+\\d+x', value: '1'.repeat(1_000) },
];

const schema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  properties: Object.fromEntries(
    HOSTILE_PATTERNS.map(({ pattern }, index) => [
      `p${index}`,
      // maxLength does not protect: with allErrors the pattern still runs on a too-long string.
      { type: 'string', maxLength: 20, pattern },
    ]),
  ),
  // The same patterns as property names.
  patternProperties: Object.fromEntries(
    HOSTILE_PATTERNS.map(({ pattern }) => [pattern, { type: 'string' }]),
  ),
};

if (process.argv[2] === 'run') {
  const { code } = standaloneValidators([{ name: 'validate', schema }]);
  const validate = new Function('linearPattern', 'require', `${code}\nreturn validate;`)(
    linearPattern,
    createRequire(import.meta.url),
  ) as (data: unknown) => boolean;
  process.stdout.write(
    `ready ${JSON.stringify({ usesLinearPattern: code.includes('linearPattern'), usesRegExp: code.includes('new RegExp(') })}\n`,
  );
  HOSTILE_PATTERNS.forEach(({ pattern, value }, index) => {
    const asValue = validate({ [`p${index}`]: value });
    const asName = validate({ [value]: 1 });
    const engine = linearPattern(pattern, 'u') instanceof RegExp ? 'RegExp' : 'RE2';
    process.stdout.write(`${JSON.stringify({ pattern, engine, asValue, asName })}\n`);
  });
}
