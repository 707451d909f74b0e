/**
 * The one sanitizer for everything evgen prints that it did not write itself: paths, names,
 * JSON pointers, diff lines, values read from databases and brokers. A pull request controls
 * file names and schema text, and CI logs, terminals and GitHub Actions read the output, so no
 * such text may start a line (a forged `::error::` or `::stop-commands::`), repaint the terminal
 * (CR, ESC sequences) or reorder what is shown (bidirectional controls).
 */

// ANSI/VT escape sequences (CSI … final byte, OSC … BEL/ST, and two-byte ESC forms).
const ESCAPE_SEQUENCE =
  /\u001b(?:\[[0-?]*[ -/]*[@-~]|\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|[@-Z\\-_])|\u009b[0-?]*[ -/]*[@-~]/g;

/**
 * C0 and C1 controls, DEL, the line and paragraph separators, and the bidirectional controls
 * (marks, embeddings, overrides, isolates) that make a terminal show text in another order.
 */
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;

/** UNPRINTABLE without C0: JSON.stringify escapes those in strings, and its own are newlines. */
const LEFT_RAW_BY_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;

const escaped = (character: string) =>
  `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`;

/**
 * Text made safe to print on one line: terminal escape sequences are removed and every other
 * character of UNPRINTABLE (newline included) is shown as a visible `\uXXXX` escape.
 */
export function printable(text: string): string {
  return text.replace(ESCAPE_SEQUENCE, '').replace(UNPRINTABLE, escaped);
}

/**
 * `JSON.stringify(value, null, indent)` with every UNPRINTABLE character written as a `\uXXXX`
 * escape (JSON.stringify leaves DEL, C1, U+2028/2029 and bidirectional controls raw): the same
 * value when parsed, and nothing in the text that a log or terminal acts on.
 */
export function printableJson(value: unknown, indent = 2): string {
  return JSON.stringify(value, null, indent).replace(LEFT_RAW_BY_JSON, escaped);
}

/** Template tag: every interpolated value goes through `printable`, the literal text does not. */
export function printed(strings: TemplateStringsArray, ...values: unknown[]): string {
  let text = strings[0] ?? '';
  values.forEach((value, index) => {
    text += printable(String(value)) + (strings[index + 1] ?? '');
  });
  return text;
}
