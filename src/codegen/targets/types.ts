/**
 * Target `types`: `<event dir>/types.ts` with one payload type per version
 * (`OrderCreatedV2Payload`, from json-schema-to-typescript) and the union over all versions
 * (`OrderCreatedPayload`). Types are closed (`additionalProperties: false` by default) so a
 * writer cannot add undeclared fields; nested named types are prefixed with `<Event>V<n>`.
 */
import { join } from 'node:path';
import { compile, type JSONSchema } from 'json-schema-to-typescript';
import type { Parser, ParserOptions } from 'prettier';
import { CatalogError } from '../../catalog/catalog-error.js';
import type { EventDefinition } from '../../catalog/model.js';
import { displayPath } from '../../catalog/read-json-file.js';
import { eventNames, versionNames, versionTypeName } from '../../common/naming.js';
import { renderTemplate, trusted } from '../render/templates.js';
import type { TargetFile, Target } from '../target.js';
import { eventFile } from './event-files.js';
import { typesSchema } from './payload-schemas.js';

const DECLARATION = /^export (?:declare )?(?:interface|type|enum|const enum) ([A-Za-z_$][\w$]*)/gm;

/** The top-level statements of TypeScript source, as prettier's TypeScript parser reads them. */
interface ParsedProgram {
  readonly body: readonly {
    readonly type: string;
    readonly range: readonly [number, number];
    readonly declaration?: { readonly type: string } | null;
  }[];
}

let typescriptParser: Promise<Parser> | undefined;

/**
 * json-schema-to-typescript's output is never trusted as code: it must parse without errors and
 * consist of exported interface and type declarations only, which compile to no JavaScript at
 * all. Text that escaped a comment (it escapes only some of what it copies into comments) and
 * became a statement fails here instead of running when the generated module is imported.
 *
 * The parser is prettier's (TypeScript's own parser, bundled), which formatting loads anyway: it
 * throws on any syntax error, and costs a fraction of loading the TypeScript compiler.
 */
export async function assertDeclarationsOnly(code: string, file: string): Promise<void> {
  const refuse = (why: string): never => {
    throw new Error(
      `${file}: json-schema-to-typescript produced ${why}; refusing to write it (a schema string ` +
        'escaped from a comment?)',
    );
  };
  typescriptParser ??= import('prettier/plugins/typescript').then(
    (plugin) => plugin.parsers.typescript,
  );
  const parser = await typescriptParser;
  let program: ParsedProgram;
  try {
    program = (await parser.parse(code, {} as ParserOptions)) as ParsedProgram;
  } catch (error) {
    const reason = error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error);
    return refuse(`code that does not parse (${reason})`);
  }
  for (const statement of program.body) {
    const declaration = statement.declaration?.type;
    // Interfaces and type aliases are erased by every compiler: no runtime JavaScript is possible.
    if (
      statement.type !== 'ExportNamedDeclaration' ||
      (declaration !== 'TSInterfaceDeclaration' && declaration !== 'TSTypeAliasDeclaration')
    )
      refuse(
        `a statement that is not an exported type declaration: ${JSON.stringify(code.slice(...statement.range).slice(0, 80))}`,
      );
  }
}

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
  await assertDeclarationsOnly(code, version.file);
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
  scope: 'event',
  async generate({ catalog }) {
    const files: TargetFile[] = [];
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
      files.push(eventFile(event, 'types.ts', body));
    }
    return files;
  },
};
