/**
 * Reference pages that cannot drift: each is rendered from what the code itself defines and must
 * equal the committed file.
 *   docs/reference/cli.md          the CLI's commander definitions
 *   docs/reference/event-json.md   the catalog loader's metadata schemas
 *   docs/reference/api/<entry>.md  every export of each package entry (the API report's names),
 *                                  with doc comments and object members
 * After a deliberate change: EVGEN_UPDATE=1 npx vitest run test/docs/reference-docs.test.ts,
 * then review the diff.
 */
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { API_ENTRIES, apiProgram } from '../package/api-entries.js';
import { UPDATE_EXPECTED } from '../support/update-expected.js';
import { apiPage, renderApiReference, undocumentedMembers } from './api-reference.js';
import { renderCliReference } from './cli-reference.js';
import { renderEventJsonReference } from './event-json-reference.js';
import { REPO } from './markdown-blocks.js';

const HOW = 'EVGEN_UPDATE=1 npx vitest run test/docs/reference-docs.test.ts';

async function expectPage(page: string, rendered: string): Promise<void> {
  const path = join(REPO, page);
  if (UPDATE_EXPECTED) {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, rendered);
  }
  const committed = await readFile(path, 'utf8').catch(() => '');
  expect(
    rendered,
    `${page} differs from what the code defines: if the change is deliberate, run ${HOW}`,
  ).toBe(committed);
}

describe('reference pages rendered from the code', () => {
  it('docs/reference/cli.md is every command and option of the CLI', async () => {
    await expectPage('docs/reference/cli.md', await renderCliReference());
  });

  it('docs/reference/event-json.md is every field of event.json and consumer files', async () => {
    await expectPage('docs/reference/event-json.md', renderEventJsonReference());
  });

  describe('docs/reference/api/', () => {
    const program = apiProgram();
    it.each(API_ENTRIES)('$name: every export with its doc comment', async (entry) => {
      await expectPage(apiPage(entry), renderApiReference(entry, program));
    });

    it.each(API_ENTRIES)('$name: every member of an options type says what it does', (entry) => {
      const missing = undocumentedMembers(entry, program).filter((member) =>
        /^[A-Za-z]*Options\./.test(member),
      );
      expect(missing, 'add a doc comment to each in the source').toEqual([]);
    });
  });
});
