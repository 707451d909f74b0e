/**
 * Where a difference's path lands in a schema file as written. Difference paths follow the
 * comparison, not the file: they pass through `$ref`s (`#/properties/total/properties/currency`
 * where `total` is a reference), name a `required` entry by its property (`#/required/customerId`),
 * use draft-07 names for tuple keywords (`items/0`, `additionalItems`), and may name a property
 * only the other version has. A report must point at something that exists, so this walks the
 * path through the file, following local references, and stops at the deepest place it reaches.
 */
import {
  jsonPointer,
  parsePointer,
  parseRefPointer,
  resolveSegments,
} from '../common/json-pointer.js';
import { isObject } from '../common/json-value.js';

export interface Location {
  /** JSON pointer into the file ('' = the whole schema). */
  readonly pointer: string;
  /** Whether the whole path was found (false: `pointer` is the deepest existing ancestor). */
  readonly exact: boolean;
}

/** References followed while walking one path: a ring of `$ref`s ends the walk, not the process. */
const MAX_HOPS = 64;

/** 2020-12 spellings of the draft-07 names a difference path uses. */
function aliasOf(
  node: Readonly<Record<string, unknown>>,
  segment: string,
  next: string | undefined,
) {
  if (segment === 'items' && next !== undefined && /^\d+$/.test(next) && 'prefixItems' in node)
    return 'prefixItems';
  if (segment === 'additionalItems' && 'prefixItems' in node && !('additionalItems' in node))
    return 'items';
  return undefined;
}

/** Finds `path` (a `#/…` fragment or a JSON pointer) in `schema`, the file's content. */
export function locatePath(schema: unknown, path: string): Location {
  const segments = parsePointer(path.replace(/^#/, '').replace(/^\/$/, '')) ?? [];
  let at: string[] = [];
  let node: unknown = schema;
  let hops = 0;
  let index = 0;
  while (index < segments.length) {
    const segment = segments[index]!;
    if (Array.isArray(node)) {
      const position = /^(0|[1-9][0-9]*)$/.test(segment) ? Number(segment) : node.indexOf(segment); // `required/customerId` → its index in the array
      if (position < 0 || position >= node.length) break;
      at = [...at, String(position)];
      node = node[position];
      index++;
      continue;
    }
    if (!isObject(node)) break;
    const key = aliasOf(node, segment, segments[index + 1]) ?? segment;
    if (Object.prototype.hasOwnProperty.call(node, key)) {
      at = [...at, key];
      node = node[key];
      index++;
      continue;
    }
    // The path goes on through a reference: continue at its target, when it is in this file.
    const target = typeof node['$ref'] === 'string' ? parseRefPointer(node['$ref']) : undefined;
    if (target === undefined || ++hops > MAX_HOPS) break;
    const resolved = resolveSegments(schema, target);
    if (!resolved.found) break;
    at = target;
    node = resolved.value;
  }
  return { pointer: jsonPointer(at), exact: index === segments.length };
}
