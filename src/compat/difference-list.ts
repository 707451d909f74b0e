/**
 * The differences a comparison found, shared instead of copied. A pair compared once is met again
 * wherever the walk reaches it: in every union trial, at every level of a recursive schema. When
 * each meeting copied the pair's differences into its caller, the copies grew with each level
 * (Confluent's recursive oneOf test pair copied millions). A list instead holds its own
 * differences plus references to finished lists under a path prefix, and keeps, as entries are
 * added, the flags a verdict needs; full paths are built only for the report (`expand`).
 */
import type { DifferenceType } from './rules/difference-types.js';

export interface Difference {
  readonly type: DifferenceType;
  /** JSON pointer fragment of where it happened, e.g. `#/properties/foo` (`#/` is the root). */
  readonly path: string;
  /**
   * A recursive pair's differences repeated where the cycle closes. They decide trial
   * comparisons correctly; reports may leave them out, as the pair reports them where it starts.
   */
  readonly viaCycle?: true;
  /**
   * Set on a difference policy `evgen` cannot judge: a change to this keyword (e.g. `format`).
   * Its type is an incompatible one, so trials treat it as a mismatch; a verdict that would
   * rest on it is refused (see diff-schemas.ts) rather than guessed.
   */
  readonly unjudged?: string;
}

/** A finished list's differences, at `prefix` (escaped pointer segments joined by `/`). */
interface Link {
  readonly list: DifferenceList;
  readonly prefix: string;
  readonly viaCycle: boolean;
}

/** Which differences `expand` reports. */
export interface ExpandOptions {
  /** Leave out unjudged differences. */
  readonly judgedOnly: boolean;
  /** Leave out repeats where a cycle closes (viaCycle). */
  readonly directOnly: boolean;
  /** At most this many; past it, `onLimit` is called (it throws). */
  readonly limit: number;
  readonly onLimit: () => never;
}

function joined(prefix: string, rest: string): string {
  if (prefix === '') return rest;
  return rest === '' ? prefix : `${prefix}/${rest}`;
}

export class DifferenceList {
  readonly #entries: (Difference | Link)[] = [];
  #compatible = true;
  #judgedCompatible = true;
  #directCompatible = true;
  #hasUnjudged = false;
  #size = 0;

  constructor(readonly compatibleTypes: ReadonlySet<DifferenceType>) {}

  /** Every difference is of a compatible type. */
  get compatible(): boolean {
    return this.#compatible;
  }

  /** The same, unjudged differences left out. */
  get judgedCompatible(): boolean {
    return this.#judgedCompatible;
  }

  /** The same, unjudged differences and repeats where a cycle closes left out. */
  get directCompatible(): boolean {
    return this.#directCompatible;
  }

  get hasUnjudged(): boolean {
    return this.#hasUnjudged;
  }

  get isEmpty(): boolean {
    return this.#entries.length === 0;
  }

  /** How many differences it holds, each linked list's counted wherever it is linked. */
  get size(): number {
    return this.#size;
  }

  push(difference: Difference): void {
    this.#entries.push(difference);
    this.#size++;
    if (difference.unjudged !== undefined) this.#hasUnjudged = true;
    if (this.compatibleTypes.has(difference.type)) return;
    this.#compatible = false;
    if (difference.unjudged !== undefined) return;
    this.#judgedCompatible = false;
    if (difference.viaCycle !== true) this.#directCompatible = false;
  }

  /**
   * Adds a finished list's differences at `prefix` (its paths are relative to it). The list must
   * not change afterwards: its flags are taken now.
   */
  link(list: DifferenceList, prefix: string, viaCycle: boolean): void {
    if (list.isEmpty) return;
    this.#entries.push({ list, prefix, viaCycle });
    this.#size += list.size;
    if (list.hasUnjudged) this.#hasUnjudged = true;
    if (!list.compatible) this.#compatible = false;
    if (!list.judgedCompatible) this.#judgedCompatible = false;
    if (!viaCycle && !list.directCompatible) this.#directCompatible = false;
  }

  /** The first unjudged difference, with its full path (only lists that hold one are entered). */
  firstUnjudged(): Difference | undefined {
    return this.#firstUnjudged('');
  }

  #firstUnjudged(prefix: string): Difference | undefined {
    for (const entry of this.#entries) {
      if ('list' in entry) {
        if (!entry.list.hasUnjudged) continue;
        const found = entry.list.#firstUnjudged(joined(prefix, entry.prefix));
        if (found !== undefined) return found;
      } else if (entry.unjudged !== undefined) return withPrefix(entry, prefix, false);
    }
    return undefined;
  }

  /** The differences in the order they were found, with full paths. */
  expand(options: ExpandOptions): Difference[] {
    const out: Difference[] = [];
    // An explicit stack: links nest as deep as the comparison did.
    const stack: { list: DifferenceList; index: number; prefix: string; viaCycle: boolean }[] = [
      { list: this, index: 0, prefix: '', viaCycle: false },
    ];
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const entry = top.list.#entries[top.index++];
      if (entry === undefined) {
        stack.pop();
        continue;
      }
      if ('list' in entry) {
        const viaCycle = top.viaCycle || entry.viaCycle;
        if (options.directOnly && viaCycle) continue;
        stack.push({
          list: entry.list,
          index: 0,
          prefix: joined(top.prefix, entry.prefix),
          viaCycle,
        });
        continue;
      }
      if (options.judgedOnly && entry.unjudged !== undefined) continue;
      const viaCycle = top.viaCycle || entry.viaCycle === true;
      if (options.directOnly && viaCycle) continue;
      if (out.length >= options.limit) options.onLimit();
      out.push(withPrefix(entry, top.prefix, viaCycle));
    }
    return out;
  }
}

/** `difference` with its path under `prefix` (its path is `#/` + the rest). */
function withPrefix(difference: Difference, prefix: string, viaCycle: boolean): Difference {
  if (prefix === '' && (!viaCycle || difference.viaCycle === true)) return difference;
  const path = `#/${joined(prefix, difference.path.slice(2))}`;
  return viaCycle ? { ...difference, path, viaCycle: true } : { ...difference, path };
}
