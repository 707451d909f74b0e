import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { runCli } from '../../src/cli/main.js';
import { useCliFixture } from './cli-fixture.js';

const cli = useCliFixture();

it('says there is nothing to scaffold when no consumer is declared, instead of "every stub already exists"', async () => {
  const handlers = join(cli.catalog.dir, 'handlers');
  expect(
    await runCli([
      'scaffold',
      '--events',
      cli.catalog.events,
      '--handlers',
      handlers,
      '--out',
      join(cli.catalog.dir, 'generated'),
    ]),
  ).toBe(0);
  expect(cli.output.stdout()).toMatch(/no consumers are declared .*_consumers/);
  expect(cli.output.stdout()).not.toContain('every stub already exists');
  expect(existsSync(handlers)).toBe(false);
});

it('reports a bad catalog like build does: problems on stderr, exit 2', async () => {
  expect(await runCli(['scaffold', '--events', join(cli.catalog.dir, 'missing')])).toBe(2);
  expect(cli.output.stderr()).toMatch(
    /missing: the events folder does not exist[^\n]*\n {2}hint: /,
  );
});
