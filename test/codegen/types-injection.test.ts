/**
 * json-schema-to-typescript's output is not trusted: schema strings it copies into comments
 * (pattern keys above all) must not turn into statements of the generated types module.
 */
import { runTarget } from '../support/run-target.js';
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { loadCatalog } from '../../src/catalog/load-catalog.js';
import { assertDeclarationsOnly, typesTarget } from '../../src/codegen/targets/types.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const ATTACK = 'x*/x*/;process.exit(7);/*';

/** The JavaScript a TypeScript module compiles to, without the empty `export {}`. */
function runtimeCode(code: string): string {
  return ts
    .transpileModule(code, {
      compilerOptions: { module: ts.ModuleKind.ESNext, removeComments: true },
    })
    .outputText.replace(/export\s*\{\s*\};?/g, '')
    .trim();
}

function issueSchema(dialect: 'draft-07' | '2020-12', value: 'ref' | 'title') {
  const defs = dialect === '2020-12' ? '$defs' : 'definitions';
  return {
    ...(dialect === '2020-12' ? { $schema: 'https://json-schema.org/draft/2020-12/schema' } : {}),
    type: 'object',
    properties: {
      id: { type: 'string' },
      meta: {
        type: 'object',
        patternProperties: {
          [ATTACK]: value === 'ref' ? { $ref: `#/${defs}/tag` } : { type: 'string', title: 'tag' },
          'a*/\n*/process.exit(8);/*': { type: 'integer' },
        },
      },
    },
    required: ['id'],
    [defs]: { tag: { type: 'string' } },
  };
}

describe('types target against comment injection', () => {
  const scratch = join(REPO, 'tmp', `types-injection-${randomBytes(4).toString('hex')}`);
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  for (const dialect of ['draft-07', '2020-12'] as const) {
    for (const value of ['ref', 'title'] as const) {
      it(`a hostile patternProperties key (${dialect}, with ${value === 'ref' ? '$ref' : 'title'}) stays inside a comment`, async () => {
        const events = join(scratch, `${dialect}-${value}`, 'events');
        const folder = join(events, 'shop', 'Tagged');
        mkdirSync(folder, { recursive: true });
        writeFileSync(
          join(folder, 'event.json'),
          JSON.stringify({
            description: 'tags',
            aggregate: 'Tag',
            aggregateId: 'id',
            kafka: { topic: 'shop.events' },
            rabbitmq: { exchange: 'shop', routingKey: 'shop.tagged' },
          }),
        );
        writeFileSync(join(folder, 'v1.schema.json'), JSON.stringify(issueSchema(dialect, value)));
        const catalog = await loadCatalog(events);
        const [file] = await runTarget(typesTarget, { catalog, runtimeImport: 'evgen/runtime' });
        expect(file!.path).toBe('shop/tagged/types.ts');
        expect(runtimeCode(file!.content)).toBe('');
        expect(file!.content).toContain('export interface TaggedV1Payload');
      });
    }
  }

  it('refuses output of json-schema-to-typescript that is more than type declarations', async () => {
    const escaped = '/**\n * via "x*\\/x*/;process.exit(7);/*".\n */\nexport type A = string;';
    await expect(assertDeclarationsOnly(escaped, 'v1.schema.json')).rejects.toThrow(
      /v1\.schema\.json: json-schema-to-typescript produced a statement that is not an exported type declaration/,
    );
    await expect(
      assertDeclarationsOnly('export interface A { a: string; }\nconsole.log(1);', 'f'),
    ).rejects.toThrow(/not an exported type declaration/);
    await expect(
      assertDeclarationsOnly('export interface A { */ a: string }', 'f'),
    ).rejects.toThrow(/does not parse/);
    await expect(assertDeclarationsOnly('export const enum E { A = 1 }', 'f')).rejects.toThrow(
      /not an exported type declaration/,
    );
    await expect(
      assertDeclarationsOnly(
        '/** ok */\nexport interface A {\n  a: string;\n}\nexport type B = A[];',
        'f',
      ),
    ).resolves.toBeUndefined();
    // A stray semicolon or a re-export is no declaration either.
    await expect(assertDeclarationsOnly('export type A = 1;;', 'f')).rejects.toThrow(
      /not an exported type declaration/,
    );
    await expect(assertDeclarationsOnly("export type { A } from './a';", 'f')).rejects.toThrow(
      /not an exported type declaration/,
    );
  });
});
