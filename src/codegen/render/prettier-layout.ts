/**
 * Prettier's layout for the few shapes template-rendered modules consist of, so generate() can
 * skip prettier for them (running it on every event's small modules is a large part of a cold
 * build). Conservative by design: `layOutAsPrettier` returns undefined for anything outside the
 * shapes whose layout it knows, and the caller then runs prettier as before, so the bytes never
 * depend on which path was taken. Tests compare both paths on real, synthetic and fuzzed catalogs.
 *
 * What it knows:
 * - named import lists (`import { a, type B } from 'x';`), in any layout the template wrote:
 *   one line when it fits in the print width or has one specifier, else one specifier per line
 *   with a trailing comma;
 * - statement heads that prettier breaks at one group when they do not fit:
 *   `export const x: T<'a', 1, P> = {` (the type arguments), `export function f(a: A, b?: B): R {`
 *   (the parameters), `export type X = T<'a', 1, P>;` (the type arguments) and
 *   `export const xs = [a, b] as const;` (the elements), one item per line; prettier measures the
 *   whole line, tail (` {`, ` as const;`) included (a const whose line is at most 4 columns too
 *   long is left to prettier, which may break after its `=` instead);
 * - a union alias too long for one line: `export type X =` and the members on the next line if
 *   they fit there, else one `| member` per line;
 * - every other code line is already in prettier's layout as long as it fits in the print width
 *   and is plain ASCII without quotes prettier might swap, escapes or template literals;
 * - `//` lines and JSDoc blocks at column 0 are kept by prettier as they are (their length does
 *   not matter) unless a line ends in whitespace;
 * - at most one blank line in a row, none at the start or end of a block.
 */
import { PRETTIER_OPTIONS } from './format.js';

const PRINT_WIDTH = PRETTIER_OPTIONS.printWidth ?? 80;

const NAMED_IMPORT = /^import (type )?\{([^{}]*)\} from ('[^'\\\n]*');$/gm;
const SPECIFIER = /^(?:type )?[A-Za-z_$][\w$]*$/;
/** Code prettier prints unchanged when the line fits: printable ASCII without `"`, `\` or backquotes. */
const PLAIN_CODE_LINE = /^[\x20-\x21\x23-\x5b\x5d-\x5f\x61-\x7e]*$/;
const COMMENT_LINE = /^(?:\/\/ .*|\/\*\*|\/\*\* (?:(?!\*\/).)*\*\/| \*| \* (?:(?!\*\/).)*| \*\/)$/;

const NAME = '[A-Za-z_$][\\w$]*';
const ANNOTATED_CONST = new RegExp(`^export const (${NAME}): (${NAME})<(.*)> = \\{$`);
const TYPE_ARGUMENT = new RegExp(`^(?:'[^'\\\\,]*'|\\d+|${NAME})$`);
const FUNCTION_HEAD = new RegExp(`^export function (${NAME})\\((.*)\\): (${NAME}) \\{$`);
const PARAMETER = new RegExp(`^${NAME}\\??: ${NAME}$`);
const GENERIC_ALIAS = new RegExp(`^export type (${NAME}) = (${NAME})<(.*)>;$`);
const UNION_ALIAS = new RegExp(`^export type (${NAME}) = (${NAME}(?: \\| ${NAME})+);$`);
const CONST_ARRAY = new RegExp(`^export const (${NAME}) = \\[(.*)\\] as const;$`);
const ELEMENT = new RegExp(`^${NAME}$`);

/**
 * `line` (longer than the print width) as prettier breaks it, or `line` itself when this module
 * does not know its shape (the caller's width check then refuses it).
 */
function breakStatementHead(line: string): string {
  const broken = (
    head: string,
    items: string[],
    itemPattern: RegExp,
    trailingComma: string,
    tail: string,
  ): string => {
    if (items.length < 2 || !items.every((item) => itemPattern.test(item))) return line;
    const body = items.map((item) => `  ${item}`).join(',\n');
    return `${head}\n${body}${trailingComma}\n${tail}`;
  };
  let match = ANNOTATED_CONST.exec(line);
  // Up to ` =` fitting, prettier may instead move the object to the next line: left to prettier.
  if (match !== null && line.length <= PRINT_WIDTH + ' = {'.length) return line;
  if (match !== null)
    return broken(
      `export const ${match[1]!}: ${match[2]!}<`,
      match[3]!.split(', '),
      TYPE_ARGUMENT,
      '',
      '> = {',
    );
  match = FUNCTION_HEAD.exec(line);
  if (match !== null)
    return broken(
      `export function ${match[1]!}(`,
      match[2]!.split(', '),
      PARAMETER,
      ',',
      `): ${match[3]!} {`,
    );
  match = GENERIC_ALIAS.exec(line);
  if (match !== null)
    return broken(
      `export type ${match[1]!} = ${match[2]!}<`,
      match[3]!.split(', '),
      TYPE_ARGUMENT,
      '',
      '>;',
    );
  match = UNION_ALIAS.exec(line);
  if (match !== null) {
    const members = `  ${match[2]!};`;
    if (members.length <= PRINT_WIDTH) return `export type ${match[1]!} =\n${members}`;
    return `export type ${match[1]!} =\n${match[2]!
      .split(' | ')
      .map((member) => `  | ${member}`)
      .join('\n')};`;
  }
  match = CONST_ARRAY.exec(line);
  if (match !== null)
    return broken(
      `export const ${match[1]!} = [`,
      match[2]!.split(', '),
      ELEMENT,
      ',',
      '] as const;',
    );
  return line;
}

/**
 * `source` in prettier's layout (with evgen's options), or undefined when it contains something
 * whose layout this module does not know, or that is not already in it.
 */
export function layOutAsPrettier(source: string): string | undefined {
  let unknown = false;
  const laidOut = source.replace(
    NAMED_IMPORT,
    (_match, type: string | undefined, list: string, from: string) => {
      const specifiers = list
        .split(',')
        .map((specifier) => specifier.trim().replace(/\s+/g, ' '))
        .filter((specifier) => specifier !== '');
      if (specifiers.length === 0 || !specifiers.every((specifier) => SPECIFIER.test(specifier))) {
        unknown = true;
        return _match;
      }
      const keyword = `import ${type ?? ''}`;
      const flat = `${keyword}{ ${specifiers.join(', ')} } from ${from};`;
      if (specifiers.length === 1 || flat.length <= PRINT_WIDTH) return flat;
      return `${keyword}{\n${specifiers.map((specifier) => `  ${specifier},`).join('\n')}\n} from ${from};`;
    },
  );
  if (unknown) return undefined;
  const lines: string[] = [];
  for (const line of laidOut.replace(/\n+$/, '').split('\n')) {
    lines.push(...(line.length > PRINT_WIDTH ? breakStatementHead(line) : line).split('\n'));
  }
  let blankBefore = true;
  let opensBlock = false;
  for (const line of lines) {
    if (line === '') {
      // Prettier keeps no blank line at the start of the file or a block, and never two in a row.
      if (blankBefore || opensBlock) return undefined;
      blankBefore = true;
      continue;
    }
    if (blankBefore && /^\s*[}\])]/.test(line)) return undefined;
    blankBefore = false;
    opensBlock = /[{[(]$/.test(line);
    if (/\s$/.test(line)) return undefined;
    if (COMMENT_LINE.test(line)) continue;
    if (line.length > PRINT_WIDTH || !PLAIN_CODE_LINE.test(line)) return undefined;
  }
  return `${lines.join('\n')}\n`;
}
