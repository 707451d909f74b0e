/**
 * A short unified diff for `evgen build --check`: each changed place as its own hunk with one line
 * of context, and at most `maxLines` changed lines in all. Enough to see why a file is stale
 * without flooding the terminal (a header change and a new export are two small hunks, not one
 * block spanning the file). Lines and label are made printable: a tampered file's text must not
 * forge output lines or repaint the terminal.
 */
import { printable } from '../diagnostics/printable.js';

/** Above this many cells the line-by-line table costs too much memory; the diff falls back to one block. */
const MAX_TABLE_CELLS = 4_000_000;
const CONTEXT = 1;

type Op = {
  readonly kind: ' ' | '-' | '+';
  readonly text: string;
  readonly oldLine: number;
  readonly newLine: number;
};

export function shortDiff(oldText: string, newText: string, label: string, maxLines = 6): string {
  const ops = diffLines(oldText.split('\n'), newText.split('\n'));
  const out = [`--- ${printable(label)} (on disk)`, `+++ ${printable(label)} (generated)`];
  let budget = maxLines;
  let hidden = 0;
  for (const hunk of hunks(ops)) {
    if (budget === 0) {
      hidden += hunk.filter((op) => op.kind !== ' ').length;
      continue;
    }
    const oldStart = Math.min(...hunk.map((op) => op.oldLine));
    const newStart = Math.min(...hunk.map((op) => op.newLine));
    const oldCount = hunk.filter((op) => op.kind !== '+').length;
    const newCount = hunk.filter((op) => op.kind !== '-').length;
    out.push(`@@ -${oldStart},${oldCount} +${newStart},${newCount} @@`);
    for (let index = 0; index < hunk.length;) {
      const op = hunk[index]!;
      if (op.kind === ' ') {
        out.push(` ${printable(op.text)}`);
        index++;
        continue;
      }
      // A run of removals and additions: share what is left of the budget between both sides.
      let end = index;
      while (end < hunk.length && hunk[end]!.kind !== ' ') end++;
      const removed = hunk.slice(index, end).filter((change) => change.kind === '-');
      const added = hunk.slice(index, end).filter((change) => change.kind === '+');
      const showRemoved = Math.min(
        removed.length,
        added.length === 0 ? budget : Math.ceil(budget / 2),
      );
      const showAdded = Math.min(added.length, budget - showRemoved);
      for (const change of removed.slice(0, showRemoved)) out.push(`-${printable(change.text)}`);
      for (const change of added.slice(0, showAdded)) out.push(`+${printable(change.text)}`);
      budget -= showRemoved + showAdded;
      hidden += removed.length - showRemoved + added.length - showAdded;
      index = end;
      if (budget === 0) break;
    }
  }
  if (hidden > 0) out.push(`… ${hidden} more changed line(s)`);
  return out.join('\n');
}

/** The edit script from `a` to `b` (longest common subsequence of lines, common ends trimmed first). */
function diffLines(a: readonly string[], b: readonly string[]): Op[] {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let aEnd = a.length;
  let bEnd = b.length;
  while (aEnd > start && bEnd > start && a[aEnd - 1] === b[bEnd - 1]) {
    aEnd--;
    bEnd--;
  }
  const ops: Op[] = [];
  const same = (oldIndex: number, newIndex: number) =>
    ops.push({ kind: ' ', text: a[oldIndex]!, oldLine: oldIndex + 1, newLine: newIndex + 1 });
  const removed = (oldIndex: number, newIndex: number) =>
    ops.push({ kind: '-', text: a[oldIndex]!, oldLine: oldIndex + 1, newLine: newIndex + 1 });
  const added = (oldIndex: number, newIndex: number) =>
    ops.push({ kind: '+', text: b[newIndex]!, oldLine: oldIndex + 1, newLine: newIndex + 1 });
  for (let index = 0; index < start; index++) same(index, index);

  const n = aEnd - start;
  const m = bEnd - start;
  if (n * m > MAX_TABLE_CELLS) {
    for (let i = start; i < aEnd; i++) removed(i, start);
    for (let j = start; j < bEnd; j++) added(aEnd, j);
  } else {
    // lcs[i * (m + 1) + j]: length of the LCS of a[start + i ..] and b[start + j ..].
    const width = m + 1;
    const lcs = new Uint32Array((n + 1) * width);
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        lcs[i * width + j] =
          a[start + i] === b[start + j]
            ? lcs[(i + 1) * width + j + 1]! + 1
            : Math.max(lcs[(i + 1) * width + j]!, lcs[i * width + j + 1]!);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && a[start + i] === b[start + j]) same(start + i++, start + j++);
      else if (j < m && (i === n || lcs[i * width + j + 1]! >= lcs[(i + 1) * width + j]!))
        added(start + i, start + j++);
      else removed(start + i++, start + j);
    }
    // Show removals before additions inside each changed run, as unified diffs do.
    sortChangeRuns(ops);
  }
  for (let offset = 0; offset < a.length - aEnd; offset++) same(aEnd + offset, bEnd + offset);
  return ops;
}

function sortChangeRuns(ops: Op[]): void {
  for (let index = 0; index < ops.length;) {
    if (ops[index]!.kind === ' ') {
      index++;
      continue;
    }
    let end = index;
    while (end < ops.length && ops[end]!.kind !== ' ') end++;
    const run = ops.slice(index, end);
    ops.splice(
      index,
      run.length,
      ...run.filter((op) => op.kind === '-'),
      ...run.filter((op) => op.kind === '+'),
    );
    index = end;
  }
}

/** Groups the edit script into hunks: changes with CONTEXT unchanged lines around them, merged when they touch. */
function hunks(ops: readonly Op[]): Op[][] {
  const result: Op[][] = [];
  let from = -1;
  let to = -1;
  for (let index = 0; index < ops.length; index++) {
    if (ops[index]!.kind === ' ') continue;
    const lo = Math.max(0, index - CONTEXT);
    const hi = Math.min(ops.length - 1, index + CONTEXT);
    if (from !== -1 && lo <= to + 1) to = Math.max(to, hi);
    else {
      if (from !== -1) result.push(ops.slice(from, to + 1));
      from = lo;
      to = hi;
    }
  }
  if (from !== -1) result.push(ops.slice(from, to + 1));
  return result;
}
