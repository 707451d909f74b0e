/**
 * The regular-expression engine of the generated validators: JSON Schema `pattern` and
 * `patternProperties` run on RE2 (re2js, a pure-JS port), whose matching time is linear in the
 * input, instead of JavaScript's backtracking engine, where `^a*a*a*a*a*b$` on 1,000 characters
 * blocks the event loop for seconds (exponential shapes for longer than a lifetime).
 *
 * Patterns are ECMAScript regular expressions in unicode mode (as ajv compiles them); RE2 syntax
 * and meaning differ in places, so each pattern is rewritten to RE2 syntax with the ECMAScript
 * meaning: `.` excludes the four line terminators, `\s` is ECMAScript's whitespace set, `\uXXXX`
 * and `\u{X}` are code points, and capturing groups become non-capturing (`test` reads no
 * groups). What RE2 cannot match in linear time — back references and lookahead — is refused
 * (`UnsupportedPatternError`); the catalog loader refuses such a schema at build time with its
 * file and JSON pointer, so this never throws for a built catalog. Captureless lookbehinds run on
 * re2js's linear lookbehind support.
 */
import { RE2JS } from 're2js';

/** A pattern the linear engine cannot run with the meaning ECMAScript gives it. */
export class UnsupportedPatternError extends Error {
  constructor(
    readonly pattern: string,
    readonly reason: string,
  ) {
    super(`pattern ${JSON.stringify(pattern)} cannot run in linear time: ${reason}`);
    this.name = 'UnsupportedPatternError';
  }
}

/** ECMAScript's WhiteSpace and LineTerminator code points (what `\s` matches), as ranges. */
const SPACE_RANGES: readonly (readonly [number, number])[] = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
];
const MAX_CODE_POINT = 0x10ffff;

const hex = (code: number) => `\\x{${code.toString(16).toUpperCase()}}`;
const rangeText = ([from, to]: readonly [number, number]) =>
  from === to ? hex(from) : `${hex(from)}-${hex(to)}`;
const SPACE = SPACE_RANGES.map(rangeText).join('');
/** The complement of `\s`, for `\S` inside a class (RE2 cannot nest a negated class). */
const NOT_SPACE = (() => {
  const ranges: [number, number][] = [];
  let next = 0;
  for (const [from, to] of SPACE_RANGES) {
    if (from > next) ranges.push([next, from - 1]);
    next = to + 1;
  }
  ranges.push([next, MAX_CODE_POINT]);
  return ranges.map(rangeText).join('');
})();
/** ECMAScript's `.` without the s flag: anything but a line terminator. */
const DOT = `[^${hex(0x0a)}${hex(0x0d)}${hex(0x2028)}${hex(0x2029)}]`;

/** General_Category long names ECMAScript accepts, by RE2's short name. */
const CATEGORY_SHORT_NAMES: Readonly<Record<string, string>> = {
  Cased_Letter: 'LC',
  Close_Punctuation: 'Pe',
  Connector_Punctuation: 'Pc',
  Control: 'Cc',
  Currency_Symbol: 'Sc',
  Dash_Punctuation: 'Pd',
  Decimal_Number: 'Nd',
  Enclosing_Mark: 'Me',
  Final_Punctuation: 'Pf',
  Format: 'Cf',
  Initial_Punctuation: 'Pi',
  Letter: 'L',
  Letter_Number: 'Nl',
  Line_Separator: 'Zl',
  Lowercase_Letter: 'Ll',
  Mark: 'M',
  Math_Symbol: 'Sm',
  Modifier_Letter: 'Lm',
  Modifier_Symbol: 'Sk',
  Nonspacing_Mark: 'Mn',
  Number: 'N',
  Open_Punctuation: 'Ps',
  Other: 'C',
  Other_Letter: 'Lo',
  Other_Number: 'No',
  Other_Punctuation: 'Po',
  Other_Symbol: 'So',
  Paragraph_Separator: 'Zp',
  Private_Use: 'Co',
  Punctuation: 'P',
  Separator: 'Z',
  Space_Separator: 'Zs',
  Spacing_Mark: 'Mc',
  Surrogate: 'Cs',
  Symbol: 'S',
  Titlecase_Letter: 'Lt',
  Unassigned: 'Cn',
  Uppercase_Letter: 'Lu',
  cntrl: 'Cc',
  digit: 'Nd',
  punct: 'P',
  Combining_Mark: 'M',
};

type Ranges = readonly (readonly [number, number])[];

const DIGIT_RANGES: Ranges = [[0x30, 0x39]];
const WORD_RANGES: Ranges = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
];
const LINE_TERMINATORS: Ranges = [
  [0x0a, 0x0a],
  [0x0d, 0x0d],
  [0x2028, 0x2029],
];

/** Sorted, merged ranges. */
function normalized(ranges: Ranges): Ranges {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const [from, to] of sorted) {
    const last = merged[merged.length - 1];
    if (last !== undefined && from <= last[1] + 1) last[1] = Math.max(last[1], to);
    else merged.push([from, to]);
  }
  return merged;
}
function complement(ranges: Ranges): Ranges {
  const result: [number, number][] = [];
  let next = 0;
  for (const [from, to] of normalized(ranges)) {
    if (from > next) result.push([next, from - 1]);
    next = to + 1;
  }
  if (next <= MAX_CODE_POINT) result.push([next, MAX_CODE_POINT]);
  return result;
}
function intersects(a: Ranges, b: Ranges): boolean {
  return a.some(([from, to]) =>
    b.some(([otherFrom, otherTo]) => from <= otherTo && otherFrom <= to),
  );
}

/** One atom of a plain sequence (see `backtracksLinearly`): its characters and repetition. */
interface Item {
  ranges: Ranges;
  min: number;
  max: number;
}

/**
 * Whether JavaScript's own engine is certain to match in linear time, so the pattern can keep
 * running there (RE2 in JavaScript costs ~0.5 µs a call, RegExp ~20 ns on the short anchored
 * patterns schemas are made of). Only a narrow, provable shape qualifies: anchored at the start
 * (`^`, so one start position), then a sequence of single-character atoms (literal, escape,
 * class, `.`) each with an optional greedy quantifier, an optional `$` last — no groups, no
 * alternation, no assertions — where every atom repeated a variable number of times shares no
 * character with what can follow it (the next atoms up to the first required one). Then giving
 * back one character of a loop fails on that very character, so each backtracking step costs
 * O(pattern) and all of them O(input × pattern). Everything else runs on RE2.
 */
function backtracksLinearly(anchored: boolean, items: readonly Item[] | undefined): boolean {
  if (!anchored || items === undefined) return false;
  return items.every((item, index) => {
    if (item.min === item.max) return true;
    let follow: Ranges = [];
    for (const next of items.slice(index + 1)) {
      follow = [...follow, ...next.ranges];
      if (next.min > 0) break;
    }
    // Nothing required follows: the end (`$`) or, unanchored, success at once.
    return !intersects(item.ranges, follow);
  });
}

/** A pattern in RE2 syntax with ECMAScript (unicode mode) meaning, and whether it looks behind. */
export function toRe2Syntax(pattern: string): { source: string; lookbehind: boolean } {
  const { source, lookbehind } = analyse(pattern);
  return { source, lookbehind };
}

function analyse(pattern: string): { source: string; lookbehind: boolean; native: boolean } {
  const refuse = (reason: string): never => {
    throw new UnsupportedPatternError(pattern, reason);
  };
  try {
    new RegExp(pattern, 'u');
  } catch (error) {
    refuse(`not a unicode-mode regular expression (${(error as Error).message})`);
  }
  let index = 0;
  let lookbehind = false;
  // The plain sequence of atoms so far, or undefined once the pattern left that shape.
  let items: Item[] | undefined = [];
  let anchored = false;
  let endAnchored = false;
  const notPlain = () => {
    items = undefined;
  };
  const codePointAt = (at: number) => pattern.codePointAt(at)!;
  const take = () => {
    const code = codePointAt(index);
    index += code > 0xffff ? 2 : 1;
    return code;
  };
  const hexDigits = (count: number) => {
    const digits = pattern.slice(index, index + count);
    index += count;
    return Number.parseInt(digits, 16);
  };

  /** After a backslash and `letter`: the code point of a character escape. */
  const characterEscape = (letter: string): number => {
    switch (letter) {
      case 't':
        return 0x09;
      case 'n':
        return 0x0a;
      case 'v':
        return 0x0b;
      case 'f':
        return 0x0c;
      case 'r':
        return 0x0d;
      case '0':
        return 0;
      case 'c':
        return take() % 32;
      case 'x':
        return hexDigits(2);
      case 'u': {
        if (pattern[index] === '{') {
          const end = pattern.indexOf('}', index);
          const code = Number.parseInt(pattern.slice(index + 1, end), 16);
          index = end + 1;
          return code;
        }
        const code = hexDigits(4);
        // A surrogate pair written as two escapes is one code point in unicode mode.
        if (
          code >= 0xd800 &&
          code <= 0xdbff &&
          /^\\u[dD][c-fC-F][0-9a-fA-F]{2}/.test(pattern.slice(index))
        ) {
          index += 2;
          const low = hexDigits(4);
          return 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
        }
        return code;
      }
      default:
        // Unicode mode allows identity escapes of syntax characters (and `-` in a class) only.
        return letter.codePointAt(0)!;
    }
  };

  const property = (negated: boolean): string => {
    const end = pattern.indexOf('}', index);
    const body = pattern.slice(index + 1, end);
    index = end + 1;
    const [name, value] = body.includes('=') ? body.split('=') : [undefined, body];
    let re2Name: string;
    if (name === undefined || name === 'General_Category' || name === 'gc')
      re2Name = CATEGORY_SHORT_NAMES[value] ?? value;
    else if (name === 'Script' || name === 'sc') re2Name = value!;
    else return refuse(`\\p{${body}}: RE2 has no Script_Extensions; use \\p{Script=…}`);
    const text = `\\${negated ? 'P' : 'p'}{${re2Name}}`;
    try {
      RE2JS.compile(text);
    } catch {
      refuse(
        `\\${negated ? 'P' : 'p'}{${body}} is a Unicode property RE2 does not know; use a general category (\\p{L}, \\p{Nd}) or a script by its long name (\\p{Script=Greek})`,
      );
    }
    return text;
  };

  /** An escape outside or inside a class, after its backslash: RE2 text and characters. */
  const escapeAtom = (inClass: boolean): { text: string; ranges?: Ranges; code?: number } => {
    const letter = String.fromCodePoint(take());
    switch (letter) {
      case 'd':
        return { text: '\\d', ranges: DIGIT_RANGES };
      case 'D':
        return { text: '\\D', ranges: complement(DIGIT_RANGES) };
      case 'w':
        return { text: '\\w', ranges: WORD_RANGES };
      case 'W':
        return { text: '\\W', ranges: complement(WORD_RANGES) };
      case 's':
        return { text: inClass ? SPACE : `[${SPACE}]`, ranges: SPACE_RANGES };
      case 'S':
        return { text: inClass ? NOT_SPACE : `[^${SPACE}]`, ranges: complement(SPACE_RANGES) };
      case 'p':
      case 'P':
        return { text: property(letter === 'P') }; // characters not known here
      case 'b':
        if (inClass) return { text: hex(0x08), ranges: [[0x08, 0x08]], code: 0x08 };
        return { text: '\\b' };
      case 'B':
        return { text: '\\B' };
      case 'k':
        return refuse('a back reference needs backtracking; match the repeated text explicitly');
      default: {
        if (/[1-9]/.test(letter))
          refuse('a back reference needs backtracking; match the repeated text explicitly');
        const code = characterEscape(letter);
        return { text: hex(code), ranges: [[code, code]], code };
      }
    }
  };

  /** One atom inside a class. */
  const classAtom = (): { text: string; ranges?: Ranges; code?: number } => {
    const code = take();
    if (code !== 0x5c) return { text: hex(code), ranges: [[code, code]], code };
    return escapeAtom(true);
  };

  const characterClass = (): { text: string; ranges?: Ranges } => {
    const negated = pattern[index] === '^';
    if (negated) index++;
    let text = '';
    let ranges: Ranges | undefined = [];
    while (pattern[index] !== ']') {
      const first = classAtom();
      if (pattern[index] === '-' && pattern[index + 1] !== ']' && first.code !== undefined) {
        index++;
        const last = classAtom();
        text += `${first.text}-${last.text}`;
        if (ranges !== undefined) ranges = [...ranges, [first.code, last.code!]];
      } else {
        text += first.text;
        ranges =
          first.ranges === undefined || ranges === undefined
            ? undefined
            : [...ranges, ...first.ranges];
      }
    }
    index++;
    const all = `${hex(0)}-${hex(MAX_CODE_POINT)}`;
    const withNegation =
      ranges === undefined ? undefined : negated ? complement(ranges) : normalized(ranges);
    // RE2 has no empty class: `[]` matches nothing and `[^]` anything.
    if (text === '') return { text: negated ? `[${all}]` : `[^${all}]`, ranges: withNegation };
    return { text: `[${negated ? '^' : ''}${text}]`, ranges: withNegation };
  };

  /** Adds an atom to the plain sequence (or leaves it) and returns its RE2 text. */
  const atom = (text: string, ranges: Ranges | undefined): string => {
    if (ranges === undefined || endAnchored) notPlain();
    else items?.push({ ranges, min: 1, max: 1 });
    return text;
  };

  let out = '';
  while (index < pattern.length) {
    const char = pattern[index]!;
    switch (char) {
      case '\\': {
        index++;
        const escaped = escapeAtom(false);
        out += atom(escaped.text, escaped.ranges);
        break;
      }
      case '.':
        index++;
        out += atom(DOT, complement(LINE_TERMINATORS));
        break;
      case '[': {
        index++;
        const cls = characterClass();
        out += atom(cls.text, cls.ranges);
        break;
      }
      case '(': {
        index++;
        notPlain();
        if (pattern[index] !== '?') out += '(?:';
        else if (pattern.startsWith('?:', index)) {
          index += 2;
          out += '(?:';
        } else if (pattern.startsWith('?=', index) || pattern.startsWith('?!', index))
          refuse('lookahead needs backtracking; express the condition without (?= or (?!');
        else if (pattern.startsWith('?<=', index) || pattern.startsWith('?<!', index)) {
          out += `(${pattern.slice(index, index + 3)}`;
          index += 3;
          lookbehind = true;
        } else if (pattern[index + 1] === '<') {
          index = pattern.indexOf('>', index) + 1; // a named group: names are not read
          out += '(?:';
        } else refuse('group modifiers such as (?i: are not supported');
        break;
      }
      case '{':
      case '*':
      case '+':
      case '?': {
        // A quantifier (unicode mode has no literal braces): the same syntax in RE2.
        const end = char === '{' ? pattern.indexOf('}', index) : index;
        const text = pattern.slice(index, end + 1);
        index = end + 1;
        const lazy = pattern[index] === '?';
        if (lazy) index++;
        out += lazy ? `${text}?` : text;
        const last = items?.[items.length - 1];
        if (last === undefined || last.min !== 1 || last.max !== 1 || lazy) notPlain();
        else if (char === '*') [last.min, last.max] = [0, Infinity];
        else if (char === '+') [last.min, last.max] = [1, Infinity];
        else if (char === '?') [last.min, last.max] = [0, 1];
        else {
          const [min, max] = text.slice(1, -1).split(',');
          last.min = Number(min);
          last.max = max === undefined ? last.min : max === '' ? Infinity : Number(max);
        }
        break;
      }
      case '^':
        if (index === 0) anchored = true;
        else notPlain();
        index++;
        out += char;
        break;
      case '$':
        if (index === pattern.length - 1) endAnchored = true;
        else notPlain();
        index++;
        out += char;
        break;
      case '|':
      case ')':
        notPlain();
        index++;
        out += char;
        break;
      default: {
        const code = take();
        out += atom(/[A-Za-z0-9_ ]/.test(char) ? char : hex(code), [[code, code]]);
      }
    }
  }
  return { source: out, lookbehind, native: backtracksLinearly(anchored, items) };
}

/** A compiled pattern as ajv uses it: `test` finds a match anywhere, as RegExp#test does. */
interface LinearPattern {
  test(value: string): boolean;
  toString(): string;
}

function compileLinear(pattern: string): LinearPattern {
  const { source, lookbehind, native } = analyse(pattern);
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(source, lookbehind ? RE2JS.LOOKBEHINDS : 0);
  } catch (error) {
    throw new UnsupportedPatternError(pattern, (error as Error).message);
  }
  // Compiled on RE2 even when RegExp runs it: a pattern RE2 refuses is refused either way.
  if (native) return new RegExp(pattern, 'u');
  return { test: (value) => compiled.test(value), toString: () => `/${pattern}/u` };
}

/**
 * ajv's `code.regExp` engine (`(pattern, flags) => { test }`, with `code`, the expression
 * generated modules reach it by): the name generated validators import from evgen's runtime.
 */
export const linearPattern: ((pattern: string, flags: string) => LinearPattern) & {
  code: string;
} = Object.assign((pattern: string) => compileLinear(pattern), { code: 'linearPattern' });

/** Why `pattern` cannot run on the linear engine, or undefined when it can. */
export function linearPatternError(pattern: string): string | undefined {
  try {
    compileLinear(pattern);
    return undefined;
  } catch (error) {
    if (error instanceof UnsupportedPatternError) return error.reason;
    throw error;
  }
}
