/**
 * Drops the schema constants ajv's standalone code declares but never reads. ajv writes a
 * `const schemaN = {…};` line for every schema it compiles, while the validation code reads only
 * a few of them (an enum's values, an open object's property list); the rest were a tenth of
 * every `validators.js`. A line is dropped only when it is exactly such a declaration, its value
 * is a JSON literal (no code runs when it is evaluated) and its name occurs nowhere else in the
 * module, not even inside a string; anything else stays as ajv wrote it.
 */

const DECLARATION = /^const (schema\d+) = (.*);$/;
const NAME = /\bschema\d+\b/g;

/** `code` (one ajv standalone module) without its unread `const schemaN = <JSON>;` lines. */
export function withoutUnusedSchemaConstants(code: string): string {
  const occurrences = new Map<string, number>();
  for (const [name] of code.matchAll(NAME)) occurrences.set(name, (occurrences.get(name) ?? 0) + 1);
  const unread = (line: string): boolean => {
    const declaration = DECLARATION.exec(line);
    if (declaration === null || occurrences.get(declaration[1]!) !== 1) return false;
    try {
      JSON.parse(declaration[2]!);
      return true;
    } catch {
      return false;
    }
  };
  return code
    .split('\n')
    .filter((line) => !unread(line))
    .join('\n');
}
