/**
 * Finds regular expressions whose backtracking can take exponential time, so the catalog loader
 * refuses them at build time instead of letting one message stall a consumer at run time (the
 * generated validators run patterns with JavaScript's backtracking engine).
 *
 * Two shapes cause exponential backtracking, and both are refused:
 *   - a repeated group whose body can be (nearly) nothing but another repetition:
 *     `(a+)+`, `(\w+\s?)*`, `(?:x*y?)+` — each character can be matched by either loop;
 *   - a repeated alternation whose branches can begin with the same character:
 *     `(a|a)*`, `(\w|\d)+`, `(ab|ac)*` (rewrite as `(a[bc])*`).
 * Bounded outer repetitions (`(\d{1,3}\.){3}`) and separated loops (`([a-z]+-)*`) are fine.
 * Polynomial cases (`\s*\s*$`) are not detected; the consumer's body size limit bounds them.
 *
 * The analysis reads the pattern's structure only (a small parser for ECMAScript syntax);
 * characters are approximated by ASCII sets, anything beyond ASCII by one shared bucket, so it
 * errs towards refusing.
 */

/** ASCII code points 0..127 as bits, plus bit 128 for "anything beyond ASCII". */
type CharSet = Uint8Array;

const SIZE = 129;
const OTHER = 128;

function emptySet(): CharSet {
  return new Uint8Array(SIZE);
}
function fullSet(): CharSet {
  return new Uint8Array(SIZE).fill(1);
}
function setOf(codes: Iterable<number>): CharSet {
  const set = emptySet();
  for (const code of codes) set[code < 128 ? code : OTHER] = 1;
  return set;
}
function range(from: number, to: number): number[] {
  const codes: number[] = [];
  for (let code = from; code <= Math.min(to, 128); code++) codes.push(code);
  if (to > 127) codes.push(OTHER);
  return codes;
}
function union(a: CharSet, b: CharSet): CharSet {
  return a.map((bit, index) => bit | b[index]!);
}
function negate(a: CharSet): CharSet {
  // A negated class still matches characters beyond ASCII.
  return a.map((bit, index) => (index === OTHER ? 1 : bit ^ 1));
}
function intersects(a: CharSet, b: CharSet): boolean {
  return a.some((bit, index) => bit === 1 && b[index] === 1);
}

const DIGITS = range(0x30, 0x39);
const WORD = [...DIGITS, ...range(0x41, 0x5a), ...range(0x61, 0x7a), 0x5f];
const SPACE = [0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, OTHER];

type Node =
  | { readonly kind: 'chars'; readonly set: CharSet }
  | { readonly kind: 'empty' } // assertions, anchors, lookarounds: match no characters
  | { readonly kind: 'seq'; readonly items: readonly Node[] }
  | { readonly kind: 'alt'; readonly branches: readonly Node[] }
  | { readonly kind: 'repeat'; readonly body: Node; readonly min: number; readonly max: number };

/** Why a pattern can backtrack exponentially, or undefined when the analysis found nothing. */
export function catastrophicPatternReason(source: string): string | undefined {
  let tree: Node;
  try {
    tree = new Parser(source).parse();
  } catch {
    return undefined; // not a valid pattern: reported as such elsewhere
  }
  return findCatastrophe(tree);
}

class Parser {
  private index = 0;
  constructor(private readonly source: string) {}

  parse(): Node {
    const node = this.alternation();
    if (this.index < this.source.length) throw new Error('unbalanced )');
    return node;
  }

  private peek(): string | undefined {
    return this.source[this.index];
  }

  private alternation(): Node {
    const branches = [this.sequence()];
    while (this.peek() === '|') {
      this.index++;
      branches.push(this.sequence());
    }
    return branches.length === 1 ? branches[0]! : { kind: 'alt', branches };
  }

  private sequence(): Node {
    const items: Node[] = [];
    while (this.index < this.source.length && this.peek() !== '|' && this.peek() !== ')') {
      items.push(this.quantified(this.atom()));
    }
    return items.length === 1 ? items[0]! : { kind: 'seq', items };
  }

  private quantified(atom: Node): Node {
    let node = atom;
    for (;;) {
      const c = this.peek();
      let min: number;
      let max: number;
      if (c === '*') [min, max] = [0, Infinity];
      else if (c === '+') [min, max] = [1, Infinity];
      else if (c === '?') [min, max] = [0, 1];
      else if (c === '{') {
        const match = /^\{(\d+)(,(\d*))?\}/.exec(this.source.slice(this.index));
        if (match === null) return node;
        min = Number(match[1]);
        max = match[2] === undefined ? min : match[3] === '' ? Infinity : Number(match[3]);
        this.index += match[0].length - 1;
      } else return node;
      this.index++;
      if (this.peek() === '?') this.index++; // lazy: same backtracking, other order
      node = { kind: 'repeat', body: node, min, max };
    }
  }

  private atom(): Node {
    const c = this.source[this.index++]!;
    switch (c) {
      case '^':
      case '$':
        return { kind: 'empty' };
      case '.':
        return { kind: 'chars', set: fullSet() };
      case '[':
        return { kind: 'chars', set: this.charClass() };
      case '\\':
        return this.escape(false) ?? { kind: 'empty' };
      case '(': {
        let lookaround = false;
        if (this.source.startsWith('?:', this.index)) this.index += 2;
        else if (/^\?<?[=!]/.test(this.source.slice(this.index))) {
          lookaround = true;
          this.index += this.source[this.index + 1] === '<' ? 3 : 2;
        } else if (this.source.startsWith('?<', this.index)) {
          this.index = this.source.indexOf('>', this.index) + 1;
        }
        const inner = this.alternation();
        if (this.source[this.index++] !== ')') throw new Error('missing )');
        return lookaround ? { kind: 'empty' } : inner;
      }
      default:
        return { kind: 'chars', set: setOf([c.codePointAt(0)!]) };
    }
  }

  /** After a backslash; undefined for assertions (`\b`, `\B`) and back references. */
  private escape(inClass: boolean): Node | undefined {
    const c = this.source[this.index++]!;
    const chars = (codes: Iterable<number>): Node => ({ kind: 'chars', set: setOf(codes) });
    switch (c) {
      case 'd':
        return chars(DIGITS);
      case 'D':
        return { kind: 'chars', set: negate(setOf(DIGITS)) };
      case 'w':
        return chars(WORD);
      case 'W':
        return { kind: 'chars', set: negate(setOf(WORD)) };
      case 's':
        return chars(SPACE);
      case 'S':
        return { kind: 'chars', set: negate(setOf(SPACE)) };
      case 'b':
        return inClass ? chars([8]) : undefined;
      case 'B':
        return undefined;
      case 'p':
      case 'P':
        this.index = this.source.indexOf('}', this.index) + 1;
        return { kind: 'chars', set: fullSet() };
      case 'u':
      case 'x': {
        const match = /^(\{[0-9a-fA-F]+\}|[0-9a-fA-F]{4}|[0-9a-fA-F]{2})/.exec(
          this.source.slice(this.index),
        );
        if (match === null) return chars([c.charCodeAt(0)]);
        this.index += match[0].length;
        return chars([parseInt(match[0].replace(/[{}]/g, ''), 16)]);
      }
      case 'k':
        this.index = this.source.indexOf('>', this.index) + 1;
        return { kind: 'chars', set: fullSet() }; // a back reference can match anything
      case 'n':
        return chars([0x0a]);
      case 'r':
        return chars([0x0d]);
      case 't':
        return chars([0x09]);
      case 'f':
        return chars([0x0c]);
      case 'v':
        return chars([0x0b]);
      default:
        if (/[1-9]/.test(c)) {
          while (/[0-9]/.test(this.peek() ?? '')) this.index++;
          return { kind: 'chars', set: fullSet() };
        }
        return chars([c.codePointAt(0)!]);
    }
  }

  private charClass(): CharSet {
    let negated = false;
    if (this.peek() === '^') {
      negated = true;
      this.index++;
    }
    let set = emptySet();
    while (this.index < this.source.length && this.peek() !== ']') {
      let code: number | undefined;
      if (this.peek() === '\\') {
        this.index++;
        const escaped = this.escape(true);
        const bits = escaped?.kind === 'chars' ? escaped.set : emptySet();
        const single = bits.reduce((count, bit) => count + bit, 0) === 1 ? bits.indexOf(1) : -1;
        if (single >= 0 && single < 128) code = single;
        else set = union(set, bits);
      } else {
        code = this.source.codePointAt(this.index)!;
        this.index += code > 0xffff ? 2 : 1;
      }
      if (
        code !== undefined &&
        this.peek() === '-' &&
        this.source[this.index + 1] !== ']' &&
        this.source[this.index + 1] !== undefined
      ) {
        this.index++;
        let to: number;
        if (this.peek() === '\\') {
          this.index++;
          const escaped = this.escape(true);
          to = escaped?.kind === 'chars' ? escaped.set.lastIndexOf(1) : code;
          if (to === OTHER) to = 0x10ffff;
        } else {
          to = this.source.codePointAt(this.index)!;
          this.index += to > 0xffff ? 2 : 1;
        }
        set = union(set, setOf(range(code, to)));
        continue;
      }
      if (code !== undefined) set = union(set, setOf([code]));
    }
    this.index++; // ]
    return negated ? negate(set) : set;
  }
}

function nullable(node: Node): boolean {
  switch (node.kind) {
    case 'chars':
      return false;
    case 'empty':
      return true;
    case 'seq':
      return node.items.every(nullable);
    case 'alt':
      return node.branches.some(nullable);
    case 'repeat':
      return node.min === 0 || nullable(node.body);
  }
}

/** Characters a match of `node` can start with. */
function firstChars(node: Node): CharSet {
  switch (node.kind) {
    case 'chars':
      return node.set;
    case 'empty':
      return emptySet();
    case 'seq': {
      let set = emptySet();
      for (const item of node.items) {
        set = union(set, firstChars(item));
        if (!nullable(item)) break;
      }
      return set;
    }
    case 'alt':
      return node.branches.map(firstChars).reduce(union, emptySet());
    case 'repeat':
      return node.max === 0 ? emptySet() : firstChars(node.body);
  }
}

/**
 * An unbounded repetition reachable in `node` such that everything else on the way is nullable:
 * then `node` itself can be "just that loop", and a loop around `node` is a loop of loops.
 */
function dominantLoop(node: Node): Node | undefined {
  switch (node.kind) {
    case 'chars':
    case 'empty':
      return undefined;
    case 'seq': {
      const required = node.items.filter((item) => !nullable(item));
      if (required.length > 1) return undefined;
      const candidates = required.length === 1 ? required : node.items;
      for (const item of candidates) {
        const found = dominantLoop(item);
        if (found !== undefined) return found;
      }
      return undefined;
    }
    case 'alt':
      for (const branch of node.branches) {
        const found = dominantLoop(branch);
        if (found !== undefined) return found;
      }
      return undefined;
    case 'repeat':
      // A variable count (`+`, `*`, `{1,3}`) is a choice point; a fixed one (`{2}`) is not.
      if (node.max > node.min && node.max > 1 && !nullableOnly(node.body)) return node;
      return dominantLoop(node.body);
  }
}

/** True when the node matches only the empty string. */
function nullableOnly(node: Node): boolean {
  return firstChars(node).every((bit) => bit === 0);
}

function alternatives(node: Node): readonly Node[] {
  if (node.kind === 'alt') return node.branches;
  if (node.kind === 'seq') {
    const required = node.items.filter((item) => item.kind !== 'empty');
    if (required.length === 1) return alternatives(required[0]!);
  }
  return [];
}

function subset(a: CharSet, b: CharSet): boolean {
  return a.every((bit, index) => bit === 0 || b[index] === 1);
}

/**
 * A loop in the body's sequence followed only by required parts the loop itself could match
 * (`.*a`, `x+x+`): where one part ends and the next begins is ambiguous in every iteration.
 */
function swallowedTail(body: Node): boolean {
  const items = body.kind === 'seq' ? body.items : [];
  for (let i = 0; i < items.length; i++) {
    const loop = items[i]!;
    if (loop.kind !== 'repeat' || loop.max !== Infinity) continue;
    const eats = firstChars(loop.body);
    const rest = items.slice(i + 1).filter((item) => !nullable(item));
    if (rest.length === 0) continue;
    if (
      rest.every(
        (item) =>
          (item.kind === 'chars' || item.kind === 'repeat') && subset(firstChars(item), eats),
      )
    )
      return true;
  }
  return false;
}

/** Outer repetitions up to this count stay polynomial in practice (`(\d{1,3}\.){3}`). */
const LARGE_REPEAT = 10;

function findCatastrophe(node: Node): string | undefined {
  switch (node.kind) {
    case 'chars':
    case 'empty':
      return undefined;
    case 'seq':
      for (const item of node.items) {
        const found = findCatastrophe(item);
        if (found !== undefined) return found;
      }
      return undefined;
    case 'alt':
      for (const branch of node.branches) {
        const found = findCatastrophe(branch);
        if (found !== undefined) return found;
      }
      return undefined;
    case 'repeat': {
      if (node.max > LARGE_REPEAT) {
        if (dominantLoop(node.body) !== undefined)
          return 'a repeated group consists of another repetition (like (a+)+), so matching can take exponential time';
        if (swallowedTail(node.body))
          return 'a repeated group has a loop that can also match what follows it (like (.*a)+ or (x+x+)+), so matching can take exponential time';
        const branches = alternatives(node.body).filter((branch) => !nullableOnly(branch));
        for (let i = 0; i < branches.length; i++)
          for (let j = i + 1; j < branches.length; j++)
            if (intersects(firstChars(branches[i]!), firstChars(branches[j]!)))
              return 'a repeated alternation has branches that can start with the same character (like (a|ab)*), so matching can take exponential time';
      }
      return findCatastrophe(node.body);
    }
  }
}
