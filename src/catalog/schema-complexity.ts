/**
 * Bounds on how complex one (bundled) version schema may be, so that loading, generating and
 * checking a hostile catalog of under 1 MB ends within seconds and a few hundred MB instead of
 * minutes or a stack overflow. What grows badly and is bounded here:
 *
 * - `$ref` depth: ajv, json-schema-to-typescript and the checker follow references recursively,
 *   so a chain or ring of thousands of definitions overflows the stack (a recursive type needs
 *   one definition that refers to itself, not a thousand-step ring);
 * - branches of one `anyOf`/`oneOf`: ajv nests each branch in the code of the previous one, and
 *   its code optimiser is quadratic in that nesting; the checker pairs every old branch with every
 *   new one;
 * - subschemas in all: every tool's cost grows with them.
 *
 * The limits are far above hand-written event payloads. Each problem names the place where the
 * limit was crossed (a pointer into the bundled schema: the file's own pointer for its own
 * parts, `/definitions/<file>…` for schemas inlined from shared files).
 */
import type { CatalogProblem } from './catalog-error.js';
import { jsonPointer, parseRefPointer, resolveSegments } from '../common/json-pointer.js';
import { isObject } from '../common/json-value.js';
import {
  ChildPosition,
  forEachSubschema,
  ROOT,
  type SchemaObject,
  type SchemaPosition,
} from '../schema/walk.js';

/** The direct subschemas of `node` as positions below `at`, last first (for a stack). */
function childrenReversed(node: SchemaObject, at: SchemaPosition): [unknown, ChildPosition][] {
  const children: [unknown, ChildPosition][] = [];
  forEachSubschema(node, (keyword, key, value) =>
    children.push([value, new ChildPosition(keyword, key, node, at)]),
  );
  return children.reverse();
}

export const SCHEMA_LIMITS = {
  /** `$ref`s followed one inside another (depth-first, each definition entered once). */
  refDepth: 100,
  /** Branches of one `anyOf` or `oneOf`. */
  unionBranches: 100,
  /** Schema objects in one bundled version schema, definitions included. */
  subschemas: 2000,
} as const;

export function schemaComplexityProblems(
  bundled: unknown,
  file: string,
  limits: typeof SCHEMA_LIMITS = SCHEMA_LIMITS,
): CatalogProblem[] {
  const problems: CatalogProblem[] = [];
  const tooComplex = (pointer: string, message: string, hint: string) =>
    problems.push({ code: 'schema-too-complex', file, pointer, message, hint });

  // One pass over the written schema (iterative: the JSON depth is bounded, but stay flat anyway).
  // Pointers are built only for a problem (positions build theirs when asked).
  let count = 0;
  const stack: [unknown, SchemaPosition][] = [[bundled, ROOT]];
  while (stack.length > 0) {
    const [node, position] = stack.pop()!;
    if (!isObject(node)) continue;
    count++;
    if (count === limits.subschemas + 1)
      tooComplex(
        position.pointer,
        `more than ${limits.subschemas} subschemas in one version (limit ${limits.subschemas})`,
        'split the payload into smaller events, or share repeated parts through one definition and $ref',
      );
    for (const keyword of ['anyOf', 'oneOf'] as const) {
      const branches = node[keyword];
      if (Array.isArray(branches) && branches.length > limits.unionBranches)
        tooComplex(
          `${position.pointer}/${keyword}`,
          `${branches.length} branches in one ${keyword} (limit ${limits.unionBranches})`,
          'group the alternatives (e.g. by a discriminator property into nested unions), or use an enum for alternatives that are plain values',
        );
    }
    for (const child of childrenReversed(node, position)) stack.push(child);
  }

  // Past the size limit the reference walk could cost as much as what the limit prevents.
  if (count > limits.subschemas) return problems;
  const deep = deepestRef(bundled, limits.refDepth);
  if (deep !== undefined)
    tooComplex(
      deep,
      `$refs lead one into another more than ${limits.refDepth} deep (limit ${limits.refDepth})`,
      'refer to the final definition directly instead of through a chain of definitions; a recursive type needs only one definition that refers to itself',
    );
  return problems;
}

/**
 * Depth-first from the root through subschemas and local `$ref`s, entering each referenced
 * schema once: the pointer (where it is written) of the `$ref` that leads deeper than `limit`
 * references, or undefined.
 * Iterative, so a ring of thousands of definitions cannot overflow this walk's own stack.
 */
function deepestRef(root: unknown, limit: number): string | undefined {
  const entered = new Set<object>();
  const stack: { node: unknown; position: SchemaPosition; depth: number }[] = [
    { node: root, position: ROOT, depth: 0 },
  ];
  while (stack.length > 0) {
    const { node, position, depth } = stack.pop()!;
    if (!isObject(node)) continue;
    const ref = node.$ref;
    if (typeof ref === 'string') {
      const segments = parseRefPointer(ref);
      const target = segments === undefined ? undefined : resolveSegments(root, segments);
      if (target?.found === true && isObject(target.value) && !entered.has(target.value)) {
        if (depth + 1 > limit) return `${position.pointer}/$ref`;
        entered.add(target.value);
        const at = { ...ROOT, pointer: jsonPointer(segments!) };
        stack.push({ node: target.value, position: at, depth: depth + 1 });
      }
    }
    for (const [value, at] of childrenReversed(node, position))
      stack.push({ node: value, position: at, depth });
  }
  return undefined;
}
