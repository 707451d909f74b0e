/**
 * Writes ajv's standalone code (with `allErrors`, one statement per line) in a shorter shape that
 * does the same thing. With `allErrors` every check reports its error in eight lines — a named
 * error object, a null check of the error list, a push and a count — and every function carries
 * ajv's call context; together they were a fifth of each `validators.js`. Three rewrites:
 *
 * - an error report `const errN = {…};` + `if(vErrors === null){vErrors = [errN];}else
 *   {vErrors.push(errN);}` + `errors++;` becomes `(vErrors ??= []).push({…});` + `errors++;`
 *   (`vErrors` is only ever `null` or an array), and the object loses ajv's `schemaPath`: evgen
 *   never reads it (violations are made from instance path, keyword and parameters), and it
 *   already named the shared schema's place rather than the view's (`shared-subschemas.ts`);
 * - a called function's errors are appended as `vErrors = vErrors?.concat(f.errors) ?? f.errors;`
 *   instead of a comparison with `null` that names the function twice;
 * - `parentData`, `parentDataProperty` and `rootData` leave the functions' parameters and every
 *   call (2020-12's `dynamicAnchors` stay), when nothing else in the module names them: ajv
 *   passes them along for `$data` references, which evgen's options never enable.
 *
 * All rewrite only whole lines in exactly the shapes ajv writes (JSON string literals matched as
 * such); code in any other shape stays as ajv wrote it. The modules' behaviour is held to plain
 * ajv's by `test/codegen/shared-validators-equivalence.test.ts`.
 */

/** A JSON string literal, as ajv writes property names, pointers and keyword names. */
const STRING = String.raw`"(?:[^"\\\n]|\\.)*"`;

const ERROR_REPORT = new RegExp(
  String.raw`^const (err\d+) = \{(instancePath[^\n]*?),schemaPath:${STRING},(keyword:${STRING},[^\n]*)\};\n` +
    String.raw`if\(vErrors === null\)\{\nvErrors = \[\1\];\n\}\nelse \{\nvErrors\.push\(\1\);\n\}\nerrors\+\+;$`,
  'gm',
);

/** Appending a called function's errors: `vErrors` is `null` or an array, never `undefined`. */
const APPEND =
  /^vErrors = vErrors === null \? (validate\d+)\.errors : vErrors\.concat\(\1\.errors\);$/gm;

/** A call's context arguments, at the end of a `if(!(validateN(…))){` line. */
const CALL_CONTEXT = new RegExp(
  String.raw`^(if\(!\(validate\d+\([^\n]*, \{instancePath[^\n]*?),parentData:[\w$]+,parentDataProperty:(?:[\w$]+|${STRING}),rootData((?:,dynamicAnchors)?)\}\)\)\)\{$`,
  'gm',
);
const FORWARDED_CONTEXT =
  /^(if\(!\(validate\d+\(data, \{instancePath),parentData,parentDataProperty,rootData((?:,dynamicAnchors)?)\}\)\)\)\{$/gm;
const HEADER =
  /^(function validate\d+\(data, \{instancePath="")(?:, parentData, parentDataProperty, rootData=data)((?:, dynamicAnchors=\{\})?)\}=\{\}\)\{$/gm;
const CONTEXT_NAME = /\b(?:parentData|parentDataProperty|rootData)\b/;

/** `code` (one ajv standalone module) with its error reports and call contexts shortened. */
export function compactAjvCode(code: string): string {
  const reported = code
    .replace(
      ERROR_REPORT,
      (_match, _name: string, instancePath: string, rest: string) =>
        `(vErrors ??= []).push({${instancePath},${rest}});\nerrors++;`,
    )
    .replace(APPEND, 'vErrors = vErrors?.concat($1.errors) ?? $1.errors;');
  const withoutContext = reported
    .replace(CALL_CONTEXT, '$1$2}))){')
    .replace(FORWARDED_CONTEXT, '$1$2}))){')
    .replace(HEADER, '$1$2}={}){');
  // Some function or call in a shape not rewritten still names the context: keep it everywhere.
  return CONTEXT_NAME.test(withoutContext) ? reported : withoutContext;
}
