/**
 * Target `types`: `<event dir>/types.ts` with one payload type per version
 * (`OrderCreatedV2Payload`, from json-schema-to-typescript) and the union over all versions
 * (`OrderCreatedPayload`). Types are closed (`additionalProperties: false` by default) so a
 * writer cannot add undeclared fields; nested named types are prefixed with `<Event>V<n>`.
 */
import { join } from 'node:path';
import { compile, type JSONSchema } from 'json-schema-to-typescript';
import { CatalogError } from '../../catalog/catalog-error.js';
import type { EventDefinition } from '../../catalog/model.js';
import { displayPath } from '../../catalog/read-json-file.js';
import { eventNames, versionNames, versionTypeName } from '../naming.js';
import { renderTemplate, trusted } from '../render/templates.js';
import type { GeneratedFile, Target } from '../target.js';
import { eventFile } from './event-files.js';
import { typesSchema } from './payload-schemas.js';

const DECLARATION = /^export (?:declare )?(?:interface|type|enum|const enum) ([A-Za-z_$][\w$]*)/gm;

/** Payload type declarations of one version; throws if json-schema-to-typescript picked a name we did not give. */
export async function compileVersionTypes(
  event: EventDefinition,
  version: EventDefinition['versions'][number],
): Promise<string> {
  const names = versionNames(event, version.version);
  const prefix = versionTypeName(event, version.version);
  const schema = typesSchema(version.bundled, names.payloadType, prefix, version.file);
  const code = await compile(schema as JSONSchema, names.payloadType, {
    bannerComment: '',
    format: false,
    additionalProperties: false,
    declareExternallyReferenced: true,
    unreachableDefinitions: false,
    enableConstEnums: false,
    unknownAny: true,
    // `minItems` tuples (`[T, ...T[]]`) make ordinary arrays unassignable; the validators enforce bounds.
    ignoreMinAndMaxItems: true,
    // The bundle is self-contained: never resolve anything from disk or the network.
    $refOptions: { resolve: { external: false } },
  });
  const declared = [...code.matchAll(DECLARATION)].map((match) => match[1]!);
  if (!declared.includes(names.payloadType)) {
    throw new Error(
      `${version.file}: json-schema-to-typescript did not declare ${names.payloadType}`,
    );
  }
  const stray = declared.filter((name) => !name.startsWith(prefix));
  if (stray.length > 0)
    throw new Error(`${version.file}: unexpected type names ${stray.join(', ')}`);
  return code.trim();
}

/** Names a problem's file the way loader problems do (from the working folder, not the events folder). */
function inCatalog(error: unknown, root: string): unknown {
  if (!(error instanceof CatalogError)) return error;
  return new CatalogError(
    error.problems.map((problem) => ({ ...problem, file: displayPath(join(root, problem.file)) })),
  );
}

export const typesTarget: Target = {
  name: 'types',
  description: 'payload types per event version and a union per event (json-schema-to-typescript)',
  async generate({ catalog }) {
    const files: GeneratedFile[] = [];
    for (const event of catalog.events) {
      const versions = [];
      for (const version of event.versions) {
        const declarations = await compileVersionTypes(event, version).catch((error: unknown) => {
          throw inCatalog(error, catalog.root);
        });
        versions.push({
          ...versionNames(event, version.version),
          version: version.version,
          declarations: trusted(declarations),
        });
      }
      const body = renderTemplate('types', {
        eventType: event.eventType,
        description: event.description,
        union: eventNames(event).payloadUnion,
        versions,
      });
      files.push(await eventFile(event, 'types.ts', body));
    }
    return files;
  },
};
