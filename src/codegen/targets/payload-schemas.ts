/**
 * The view of one version's bundled payload schema that json-schema-to-typescript compiles: the
 * strict writer view (src/schema/views.ts, shared with the compatibility checker and the
 * validators) with every name json-schema-to-typescript derives under our control (root named
 * `<Event>V<n>Payload`, nested named types prefixed with `<Event>V<n>`) and code-bearing extension
 * keywords (`tsType`, `tsEnumNames`) removed.
 */
import { CatalogError } from '../../catalog/catalog-error.js';
import type { JsonSchema } from '../../catalog/model.js';
import { isObject } from '../../common/json-value.js';
import { writerSchema } from '../../schema/views.js';
import { mapSchema, type SchemaObject } from '../../schema/walk.js';
import { pascalCase } from '../../common/naming.js';
import { commentText, isSafeIdentifier, sortKeysDeep } from '../render/safe-code.js';

/** Keywords json-schema-to-typescript copies into output verbatim: never let catalog text through them. */
const CODE_BEARING_KEYWORDS = ['tsType', 'tsEnumNames', 'tsName', '$id', 'id'];

/** The same entries under keys that are safe in a comment (`*\/`, no line breaks), kept distinct. */
function commentSafeKeys(entries: Record<string, unknown>): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(entries)) {
    const safe = commentText(key);
    let unique = safe;
    for (let n = 2; Object.hasOwn(result, unique); n++) unique = `${safe} (${n})`;
    result[unique] = value;
  }
  return result;
}

/**
 * The view json-schema-to-typescript compiles: the writer view, with the root titled `rootName`
 * and every other named schema (a `title`, or an entry of `definitions`/`$defs`) titled
 * `<prefix><PascalCaseName>`. Two different schemas that would get the same name are reported.
 */
export function typesSchema(
  bundled: JsonSchema,
  rootName: string,
  prefix: string,
  source: string,
): JsonSchema {
  const writer = writerSchema(bundled);
  if (!isObject(writer)) return writer;
  // Type name → the first schema that claimed it (its body, to tell a re-use from a clash, and where it is).
  const claimed = new Map<string, { body: string; pointer: string }>([
    [rootName, { body: '<root>', pointer: '' }],
  ]);
  const claim = (name: string, node: SchemaObject, label: string, pointer: string): string => {
    const body = JSON.stringify(sortKeysDeep({ ...node, title: undefined }));
    const previous = claimed.get(name);
    if (previous !== undefined && previous.body !== body) {
      throw new CatalogError([
        {
          code: 'type-name-collision',
          file: source,
          pointer,
          message: `this schema and the one at ${previous.pointer === '' ? 'the root' : `#${previous.pointer}`} would both generate the TypeScript type ${name} (${label})`,
          hint: 'give one of them a different "title" (or rename its definition); evgen never renames silently',
        },
      ]);
    }
    if (previous === undefined) claimed.set(name, { body, pointer });
    return name;
  };
  const named = (raw: string, node: SchemaObject, pointer: string): string | undefined => {
    const name = `${prefix}${pascalCase(raw)}`;
    return pascalCase(raw) === '' || !isSafeIdentifier(name)
      ? undefined
      : claim(name, node, `from ${JSON.stringify(raw)}`, pointer);
  };
  const rename = (
    node: SchemaObject,
    parentKeyword: string | undefined,
    key: string | undefined,
    pointer: string,
  ): SchemaObject => {
    const copy = { ...node };
    for (const keyword of CODE_BEARING_KEYWORDS) delete copy[keyword];
    const raw =
      typeof copy.title === 'string' && copy.title.trim() !== ''
        ? copy.title
        : parentKeyword === 'definitions' || parentKeyword === '$defs'
          ? key
          : undefined;
    delete copy.title;
    const name = raw === undefined ? undefined : named(raw, copy, pointer);
    if (name !== undefined) copy.title = name;
    return copy;
  };
  const result = mapSchema(writer, (node, { keyword: parentKeyword, key, pointer }) => {
    // json-schema-to-typescript knows tuples only in draft-07 form (`items: [...]` + `additionalItems`).
    if (Array.isArray(node.prefixItems)) {
      const rest = node.items;
      node.items = node.prefixItems;
      delete node.prefixItems;
      if (rest === undefined) delete node.additionalItems;
      else node.additionalItems = rest;
    }
    // Pattern keys only reach json-schema-to-typescript's comments, which it escapes badly: the
    // types view carries them neutralised (the validators keep the real patterns).
    if (isObject(node.patternProperties))
      node.patternProperties = commentSafeKeys(node.patternProperties);
    if (parentKeyword === undefined) {
      for (const keyword of CODE_BEARING_KEYWORDS) delete node[keyword];
      return node;
    }
    return rename(node, parentKeyword, typeof key === 'string' ? key : undefined, pointer);
  }) as SchemaObject;
  // The root: its own title becomes part of the description, its name is fixed.
  const description = [
    typeof writer.title === 'string' ? writer.title : undefined,
    typeof writer.description === 'string' ? writer.description : undefined,
  ]
    .filter((part): part is string => part !== undefined && part.trim() !== '')
    .join(': ');
  return { ...result, title: rootName, ...(description !== '' ? { description } : {}) };
}
