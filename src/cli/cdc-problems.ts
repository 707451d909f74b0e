/** How `outbox status --cdc` and `trace --cdc` show whether the CDC outbox's writes are read. */
import type { CdcServerProblem } from '../runtime/errors.js';

/**
 * Whether a connector reads what is written, and when not each broken rule: the setting, its
 * value, the value needed and how to change it (the lines `trace --cdc` prints too).
 */
export function formatCdcProblems(problems: readonly CdcServerProblem[] | null): string[] {
  if (problems === null) {
    return ['CDC writes: not looked at (no CDC outbox table in this database)'];
  }
  if (problems.length === 0) return ['CDC writes: accepted (a connector reads what is written)'];
  return [
    'CDC writes: REFUSED (no connector would read them; nothing is lost, the writers fail):',
    ...problems.map(
      (p) => `  ${p.setting} is ${p.value}, needs ${p.required}\n    fix: ${p.remedy}`,
    ),
  ];
}
