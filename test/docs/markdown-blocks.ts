/**
 * Fenced code blocks of the Markdown documentation, with where they are, so tests can compile or
 * run exactly what a reader copies. A block is "```lang" … "```" at the start of a line; the
 * HTML comment right before a block (invisible on any Git host) may carry directives for the test.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));

export interface CodeBlock {
  /** The file, relative to the repository. */
  readonly file: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  readonly lang: string;
  readonly code: string;
  /** The text of an HTML comment directly before the fence (one blank line allowed), if any. */
  readonly directive?: string;
  /** The nearest heading above the block. */
  readonly heading: string;
}

/** Every fenced block of one Markdown file. */
export function codeBlocks(path: string): CodeBlock[] {
  const lines = readFileSync(path, 'utf8').split('\n');
  const file = relative(REPO, path);
  const blocks: CodeBlock[] = [];
  let heading = '';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (/^#{1,6} /.test(line)) heading = line.replace(/^#+ /, '');
    const open = /^```([\w-]*)\s*$/.exec(line);
    if (open === null) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
    let before = start - 1;
    if (before >= 0 && lines[before] === '') before--;
    const comment = before >= 0 ? /^<!--\s*([\s\S]*?)\s*-->$/.exec(lines[before]!) : null;
    blocks.push({
      file,
      line: start + 1,
      lang: open[1]!,
      code: `${body.join('\n')}\n`,
      heading,
      ...(comment === null ? {} : { directive: comment[1]! }),
    });
  }
  return blocks;
}

/** README.md and every Markdown file under docs/, sorted. */
export function documentationFiles(): string[] {
  const found: string[] = [join(REPO, 'README.md')];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) found.push(path);
    }
  };
  walk(join(REPO, 'docs'));
  return found.sort();
}

/** The first block of `lang` under the heading `heading` of `file` (relative to the repository). */
export function blockUnder(file: string, heading: string, lang: string): CodeBlock {
  const block = codeBlocks(join(REPO, file)).find(
    (candidate) => candidate.heading === heading && candidate.lang === lang,
  );
  if (block === undefined) throw new Error(`${file} has no ${lang} block under "${heading}"`);
  return block;
}

/** A statement of TypeScript at the start of a line (what an unfenced code line looks like). */
const TYPESCRIPT_LINE =
  /^(?:const|let|await|import|export|function|process\.once|new [A-Z]\w*\()\b/;

/**
 * Lines of one Markdown file that are indented TypeScript outside any fence: code a reader would
 * copy that no test compiles (and that most renderers show as running text after a paragraph).
 */
export function unfencedCodeLines(path: string): { file: string; line: number; text: string }[] {
  const lines = readFileSync(path, 'utf8').split('\n');
  const file = relative(REPO, path);
  const found: { file: string; line: number; text: string }[] = [];
  let fenced = false;
  lines.forEach((line, index) => {
    if (/^\s*```/.test(line)) fenced = !fenced;
    else if (!fenced && /^ {4,}\S/.test(line) && TYPESCRIPT_LINE.test(line.trim())) {
      found.push({ file, line: index + 1, text: line.trim() });
    }
  });
  return found;
}
