/**
 * evgen's SQL carries bind parameters as the dialect writes them: numbered on PostgreSQL (`$1`,
 * `$2`, a number may repeat), `?` in order on MySQL. Query builders whose raw-SQL call takes
 * other placeholders or parameter objects need the statement cut at each parameter instead;
 * quoted strings, quoted identifiers, dollar-quoted bodies and comments are passed over, so a
 * `$1` or `?` inside them stays text.
 */
import type { DialectName } from '../db/sql-dialect.js';

interface SplitStatement {
  /** The SQL text around the parameters: always one more piece than parameters. */
  readonly pieces: readonly string[];
  /** Per parameter occurrence, in order, its 0-based index into the statement's params. */
  readonly parameters: readonly number[];
}

const IDENTIFIER_CHAR = /[A-Za-z0-9_$]/;
const DOLLAR_TAG = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/;

/** Cuts `text` at every parameter (`$n` on PostgreSQL, `?` on MySQL) outside quotes and comments. */
export function splitAtParameters(text: string, dialect: DialectName = 'postgres'): SplitStatement {
  const mysql = dialect === 'mysql';
  const pieces: string[] = [];
  const parameters: number[] = [];
  let pieceStart = 0;
  let i = 0;
  const cut = (length: number, index: number) => {
    pieces.push(text.slice(pieceStart, i));
    parameters.push(index);
    i += length;
    pieceStart = i;
  };
  while (i < text.length) {
    const char = text[i]!;
    const next = text[i + 1];
    if (char === "'" || char === '"' || (mysql && char === '`')) {
      // MySQL strings take backslash escapes; PostgreSQL's only in E'…' strings.
      const backslashes =
        char !== '`' && (mysql || (char === "'" && /[Ee]/.test(text[i - 1] ?? '')));
      i = endOfQuoted(text, i, char, backslashes);
    } else if ((char === '-' && next === '-') || (mysql && char === '#')) {
      const end = text.indexOf('\n', i);
      i = end === -1 ? text.length : end + 1;
    } else if (char === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end === -1 ? text.length : end + 2;
    } else if (mysql && char === '?') {
      cut(1, parameters.length);
    } else if (!mysql && char === '$' && !IDENTIFIER_CHAR.test(text[i - 1] ?? '')) {
      const number = /^\$(\d+)/.exec(text.slice(i));
      const tag = number === null ? DOLLAR_TAG.exec(text.slice(i)) : null;
      if (number !== null) {
        cut(number[0].length, Number(number[1]) - 1);
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
