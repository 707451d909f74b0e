/**
 * The only ways a catalog value (title, property name, enum value, description, …) may reach
 * generated code. Each helper either produces a token that cannot break out of its syntactic
 * position (identifier, string literal, comment, JSON expression) or throws.
 */

/** Words that may not name a binding or a type in strict-mode ES modules / TypeScript. */
const RESERVED_WORDS: ReadonlySet<string> = new Set([
  // ECMAScript reserved words
  'break',
  'case',
  'catch',
  'class',
  'const',
  'continue',
  'debugger',
  'default',
  'delete',
  'do',
  'else',
  'enum',
  'export',
  'extends',
  'false',
  'finally',
  'for',
  'function',
  'if',
  'import',
  'in',
  'instanceof',
  'new',
  'null',
  'return',
  'super',
  'switch',
  'this',
  'throw',
  'true',
  'try',
  'typeof',
  'var',
  'void',
  'while',
  'with',
  // strict mode and module code
  'implements',
  'interface',
  'let',
  'package',
  'private',
  'protected',
  'public',
  'static',
  'yield',
  'await',
  'arguments',
  'eval',
  // TypeScript: cannot name a type, or mean something else in a declaration
  'any',
  'bigint',
  'boolean',
  'declare',
  'never',
  'number',
  'object',
  'string',
  'symbol',
  'undefined',
  'unknown',
  'type',
  'namespace',
  'module',
  'as',
  'satisfies',
  'keyof',
  'infer',
  'readonly',
  'unique',
  'is',
  'asserts',
  'abstract',
  'accessor',
  'constructor',
  'global',
  'require',
]);

const IDENTIFIER = /^[\p{ID_Start}$_][\p{ID_Continue}$\u200C\u200D]*$/u;

/** Whether `name` can be used verbatim as a TypeScript identifier (binding, type or member name). */
export function isSafeIdentifier(name: string): boolean {
  return IDENTIFIER.test(name) && !RESERVED_WORDS.has(name);
}

/** Returns `name` unchanged if it is a valid, non-reserved TypeScript identifier; throws otherwise. */
export function identifier(name: unknown): string {
  if (typeof name !== 'string' || !isSafeIdentifier(name)) {
    throw new Error(`not a safe TypeScript identifier: ${JSON.stringify(String(name))}`);
  }
  return name;
}

/** Escapes one UTF-16 code unit as `\uXXXX`. */
function unicodeEscape(char: string): string {
  return `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/**
 * A string literal holding exactly `value`. Backslashes, the quote, every control character,
 * U+2028/U+2029 and lone surrogates are escaped, so the literal always ends where it should.
 * A single- or double-quoted literal never interprets `${…}` or backticks.
 */
export function stringLiteral(value: unknown, quote: "'" | '"' = "'"): string {
  if (typeof value !== 'string')
    throw new Error(`stringLiteral expects a string, got ${typeof value}`);
  let out = quote;
  for (const char of value) {
    switch (char) {
      case '\\':
        out += '\\\\';
        break;
      case quote:
        out += `\\${quote}`;
        break;
      case '\n':
        out += '\\n';
        break;
      case '\r':
        out += '\\r';
        break;
      case '\t':
        out += '\\t';
        break;
      default: {
        const code = char.codePointAt(0)!;
        const loneSurrogate = char.length === 1 && code >= 0xd800 && code <= 0xdfff;
        out +=
          code < 0x20 || code === 0x7f || code === 0x2028 || code === 0x2029 || loneSurrogate
            ? unicodeEscape(char)
            : char;
      }
    }
  }
  return out + quote;
}

/**
 * Text that is safe inside a `//` line comment and inside a `/* *\/` block: `*\/` can no longer
 * close the block and every line terminator (including U+2028/U+2029, which end `//` comments)
 * becomes a space. Use `docComment` for multi-line JSDoc.
 */
export function commentText(text: unknown): string {
  return neutraliseComment(String(text))
    .replace(/\s*\n\s*/g, ' ')
    .trim();
}

/** Lines of text made safe for a JSDoc block: no `*\/`, line terminators normalised to `\n`. */
function neutraliseComment(text: string): string {
  return (
    text
      .replace(/\r\n?|[\u2028\u2029\u0085]/g, '\n')
      // Other control characters have no business in a comment; some editors treat them as breaks.
      .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, ' ')
      // `*/` ends a block comment; `*\/` reads the same to a person and ends nothing.
      .replace(/\*\//g, '*\\/')
      // `/*` inside a block is harmless to TS but confuses readers and some tools.
      .replace(/\/\*/g, '/\\*')
  );
}

/**
 * A complete JSDoc block (`/** … *\/`) with `text` split into lines, each prefixed by ` * `,
 * indented by `indent`. Returns an empty string for empty text so templates can omit it.
 */
export function docComment(text: unknown, indent = ''): string {
  // Any value a template hands over prints as String() does; null and undefined print nothing.
  const value: unknown = text ?? '';
  const body = neutraliseComment(String(value)).trim();
  if (body === '') return '';
  const lines = body.split('\n').map((line) => line.trimEnd());
  if (lines.length === 1) return `${indent}/** ${lines[0]!} */`;
  return [
    `${indent}/**`,
    ...lines.map((line) => (line === '' ? `${indent} *` : `${indent} * ${line}`)),
    `${indent} */`,
  ].join('\n');
}

/** Deep copy of a JSON value with every object's keys sorted, so output does not depend on input order. */
export function sortKeysDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeysDeep);
  if (value !== null && typeof value === 'object') {
    // fromEntries defines own properties: a key named `__proto__` stays a key.
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, sortKeysDeep((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
}

/**
 * A JavaScript expression that evaluates to `value`: JSON with sorted keys, U+2028/U+2029
 * escaped. JSON text is a valid JS expression; every string inside is a double-quoted literal.
 */
export function jsonLiteral(value: unknown, indent?: number): string {
  const json = JSON.stringify(sortKeysDeep(value), null, indent);
  if (json === undefined) throw new Error('jsonLiteral: value is not representable as JSON');
  return json.replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}
