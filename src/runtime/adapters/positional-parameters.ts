/**
 * evgen's SQL numbers its bind parameters (`$1`, `$2`, a number may repeat). Query builders whose
 * raw-SQL call takes `?` placeholders or parameter objects need the statement cut at each
 * parameter instead; quoted strings, quoted identifiers, dollar-quoted bodies and comments are
 * passed over, so a `$1` or `?` inside them stays text.
 */

export interface SplitStatement {
  /** The SQL text around the parameters: always one more piece than parameters. */
  readonly pieces: readonly string[];
  /** Per parameter occurrence, in order, its 0-based index into the statement's params. */
  readonly parameters: readonly number[];
}

const IDENTIFIER_CHAR = /[A-Za-z0-9_$]/;
const DOLLAR_TAG = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/;

/** Cuts `text` at every `$n` parameter outside quotes and comments. */
export function splitAtParameters(text: string): SplitStatement {
  const pieces: string[] = [];
  const parameters: number[] = [];
  let pieceStart = 0;
  let i = 0;
  while (i < text.length) {
    const char = text[i]!;
    const next = text[i + 1];
    if (char === "'" || char === '"') {
      i = endOfQuoted(text, i, char, char === "'" && /[Ee]/.test(text[i - 1] ?? ''));
    } else if (char === '-' && next === '-') {
      const end = text.indexOf('\n', i);
      i = end === -1 ? text.length : end + 1;
    } else if (char === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end === -1 ? text.length : end + 2;
    } else if (char === '$' && !IDENTIFIER_CHAR.test(text[i - 1] ?? '')) {
      const number = /^\$(\d+)/.exec(text.slice(i));
      const tag = number === null ? DOLLAR_TAG.exec(text.slice(i)) : null;
      if (number !== null) {
        pieces.push(text.slice(pieceStart, i));
        parameters.push(Number(number[1]) - 1);
        i += number[0].length;
        pieceStart = i;
      } else if (tag !== null) {
        const end = text.indexOf(tag[0], i + tag[0].length);
        i = end === -1 ? text.length : end + tag[0].length;
      } else {
        i++;
      }
    } else {
      i++;
    }
  }
  pieces.push(text.slice(pieceStart));
  return { pieces, parameters };
}

/** Index just past the quoted run opened at `start` (a doubled quote stays inside). */
function endOfQuoted(
  text: string,
  start: number,
  quote: string,
  backslashEscapes: boolean,
): number {
  let i = start + 1;
  while (i < text.length) {
    const char = text[i]!;
    if (backslashEscapes && char === '\\') {
      i += 2;
    } else if (char === quote) {
      if (text[i + 1] !== quote) return i + 1;
      i += 2;
    } else {
      i++;
    }
  }
  return text.length;
}
