/** Formats generated TypeScript in memory, with one fixed configuration, so output never depends on the user's prettier setup. */
import type { Options } from 'prettier';

export const PRETTIER_OPTIONS: Options = Object.freeze({
  parser: 'typescript',
  printWidth: 100,
  tabWidth: 2,
  useTabs: false,
  semi: true,
  singleQuote: true,
  quoteProps: 'as-needed',
  trailingComma: 'all',
  bracketSpacing: true,
  arrowParens: 'always',
  endOfLine: 'lf',
});

/**
 * Generated sources longer than this are written as generated, unformatted: prettier needs
 * seconds and hundreds of MB for a multi-megabyte file (an enum of 100,000 values gives a 3 MB
 * union type), and nobody reads such a file by eye. The choice depends only on the content, so
 * output stays deterministic.
 */
export const MAX_FORMATTED_LENGTH = 512 * 1024;

let prettier: Promise<typeof import('prettier')> | undefined;

/** Formats TypeScript source; the result uses LF line endings and ends with one newline. */
export async function formatTypeScript(source: string): Promise<string> {
  // Loaded on first use: a build whose files all come from the cache never needs prettier.
  prettier ??= import('prettier');
  const formatted = await (await prettier).format(source.replace(/\r\n?/g, '\n'), PRETTIER_OPTIONS);
  return formatted.endsWith('\n') ? formatted : `${formatted}\n`;
}
