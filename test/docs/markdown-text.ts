/** Text helpers for the Markdown pages the reference renderers write. */

/**
 * Escapes text for a table cell: pipes and line breaks would end the cell, and `<file>` outside
 * backticks would be taken for an HTML tag.
 */
export function cell(text: string): string {
  return text
    .split(/(`[^`]*`)/)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(/</g, '&lt;').replace(/>/g, '&gt;')))
    .join('')
    .replace(/\|/g, '\\|')
    .replace(/\s*\n\s*/g, ' ');
}

/** Code in a table cell: backticks around it, pipes escaped (GitHub reads `\|` inside code too). */
export function codeCell(code: string): string {
  const flat = code.replace(/\s*\n\s*/g, ' ');
  return `\`${flat.replace(/\|/g, '\\|')}\``;
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
export function anchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}
