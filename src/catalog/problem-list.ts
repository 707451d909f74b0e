/**
 * Collects every problem found while loading a catalog, so the user sees all of them at once
 * instead of fixing one per run.
 */
import { compareDiagnostics } from '../diagnostics/diagnostic.js';
import { CatalogError, type CatalogProblem } from './catalog-error.js';

export class ProblemList {
  readonly #problems: CatalogProblem[] = [];

  add(problem: CatalogProblem): void {
    this.#problems.push(problem);
  }

  get size(): number {
    return this.#problems.length;
  }

  /** Throws a CatalogError with every problem, ordered by file, then pointer, then code. */
  throwIfAny(): void {
    if (this.#problems.length === 0) return;
    const sorted = [...this.#problems].sort(compareDiagnostics);
    throw new CatalogError(dedupe(sorted));
  }
}

function dedupe(problems: readonly CatalogProblem[]): CatalogProblem[] {
  const seen = new Set<string>();
  return problems.filter((problem) => {
    const key = JSON.stringify([problem.code, problem.file, problem.pointer, problem.message]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
