/**
 * A short unified-style diff for `evgen build --check`: the changed region between the common
 * first and last lines, capped to a few lines each side. Enough to see why a file is stale.
 */

export function shortDiff(oldText: string, newText: string, label: string, maxLines = 6): string {
  const oldLines = oldText.split('\n');
  const newLines = newText.split('\n');
  let start = 0;
  while (start < oldLines.length && start < newLines.length && oldLines[start] === newLines[start]) start++;
  let oldEnd = oldLines.length;
  let newEnd = newLines.length;
  while (oldEnd > start && newEnd > start && oldLines[oldEnd - 1] === newLines[newEnd - 1]) {
    oldEnd--;
    newEnd--;
  }
  const removed = oldLines.slice(start, oldEnd);
  const added = newLines.slice(start, newEnd);
  const out = [
    `--- ${label} (on disk)`,
    `+++ ${label} (generated)`,
    `@@ -${start + 1},${removed.length} +${start + 1},${added.length} @@`,
    ...capped(removed, '-', maxLines),
    ...capped(added, '+', maxLines),
  ];
  return out.join('\n');
}

function capped(lines: readonly string[], sign: string, maxLines: number): string[] {
  const shown = lines.slice(0, maxLines).map((line) => `${sign}${line}`);
  if (lines.length > maxLines) shown.push(`${sign}… ${lines.length - maxLines} more line(s)`);
  return shown;
}
