// ESLint: typescript-eslint's strict type-checked preset over all hand-written code (src/, test/,
// .ci/) and over the generated TypeScript in generated/, which users read and compile, so it is
// held to the same rules. Rules that clash with a deliberate pattern are tuned below, each with why.
import eslint from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      'dist/**',
      // Ajv's standalone validator code: emitted by Ajv, not by our templates (@ts-nocheck, unused
      // schema constants); its behaviour is covered by the validator tests instead.
      'generated/**/validators.js',
      // Golden expected output is the generator's output (rewritten with EVGEN_UPDATE=1), never
      // hand-edited; the same templates are linted through generated/.
      'test/golden/*/expected/**',
      'test/**/fixtures/**/out/**',
    ],
  },
  eslint.configs.recommended,
  tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        // The project service uses tsconfig.json; .ci/ and this file are outside it.
        projectService: { allowDefaultProject: ['.ci/*.ts', 'eslint.config.js'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // With noUncheckedIndexedAccess, `xs[i]!` after a length or key check is the deliberate idiom.
      '@typescript-eslint/no-non-null-assertion': 'off',
      // Sanitizers must match control characters on purpose (they strip them from output).
      'no-control-regex': 'off',

      // Numbers read naturally in messages; strings, unions with undefined and objects must not.
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        {
          allowNumber: true,
          ...{ allowAny: false, allowBoolean: false, allowNullish: false, allowRegExp: false },
          ...{ allowNever: false, allowArray: false },
        },
      ],
      // `(x) => f(x)` as a callback stays a one-liner even when f returns void.
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
      // Methods of promise-returning interfaces are `async` without awaiting on purpose: a
      // synchronous throw must reach the caller as a rejection, like every other failure.
      '@typescript-eslint/require-await': 'off',
      // Re-raising what a callee threw (or a test behaviour returned) unchanged, whatever it is.
      '@typescript-eslint/only-throw-error': ['error', { allowThrowingUnknown: true }],
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      // A leading underscore marks a binding left unused on purpose (a key dropped by destructuring,
      // a parameter kept for the call shape).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // TypeScript's narrowing misses flags that callbacks change during an await, lib types omit
      // JSON.stringify's undefined, and cleanup hooks must tolerate a setup that failed: the rule
      // flags exactly those guards.
      '@typescript-eslint/no-unnecessary-condition': 'off',
      // Conversions at runtime boundaries (database rows, broker headers, caught errors) guard
      // against foreign data whose static type is only an assumption.
      '@typescript-eslint/no-unnecessary-type-conversion': 'off',
      // Schemas and message headers are plain string maps; dropping a key from them is `delete`.
      '@typescript-eslint/no-dynamic-delete': 'off',
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // Tests poke at parsed JSON, vitest's asymmetric matchers (typed any) and dynamically
      // imported generated modules; the assertions themselves check the shapes.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // Failure messages print exit codes, signals and looked-up names as they are, null included.
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        { allowNumber: true, allowNullish: true, allowAny: false, allowBoolean: false },
      ],
      // Tests evaluate generated literals with `new Function` to prove they parse back exactly.
      '@typescript-eslint/no-implied-eval': 'off',
    },
  },
  {
    // Plain-node helper scripts (loader hooks, the bench child): no types to check against.
    files: ['**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: globals.node },
  },
);
