/**
 * The released-versions lock (`events/evgen.lock.json`): `evgen check --update-lock` writes it
 * deterministically and only after a passing check, `evgen check` catches an edit or deletion of a
 * locked version without git, and a damaged lock is a located exit-2 problem in every format.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkCatalog } from 'evgen';
import { versionHash } from '../../src/compat/release-lock.js';
import { evgen, EXAMPLE_EVENTS, exampleCopy } from './support/cli-run.js';
import { catalogOf, eventWith, payload } from './support/hand-catalog.js';

let copy: Awaited<ReturnType<typeof exampleCopy>>;
const lockFile = () => join(copy.events, 'evgen.lock.json');
const orderCreated = (file: string) => join(copy.events, 'order', 'OrderCreated', file);

beforeEach(async () => {
  copy = await exampleCopy();
});
afterEach(async () => {
  await copy.dispose();
});

interface JsonReport {
  ok: boolean;
  problems: { code: string; file: string; pointer: string }[];
  violations: { code: string; file: string; message: string; version: number }[];
}

describe('evgen check --update-lock', () => {
  it("writes the same sorted lock every time, and the repository's own lock is current", async () => {
    await rm(lockFile());
    const first = await evgen('check', '--events', copy.events, '--update-lock');
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('locked 7 new versions in');
    // The run that creates the lock does not also say there is none.
    expect(first.stdout).not.toContain('no evgen.lock.json');
    expect(first.stdout).toContain('this run creates evgen.lock.json');
    const written = await readFile(lockFile(), 'utf8');
    await rm(lockFile());
    await evgen('check', '--events', copy.events, '--update-lock');
    expect(await readFile(lockFile(), 'utf8')).toBe(written);
    expect(written.endsWith('}\n')).toBe(true);
    expect(written).not.toContain('\r');
    const events = Object.keys((JSON.parse(written) as { events: object }).events);
    expect(events).toEqual([...events].sort());
    // The committed lock of the example catalog is exactly what --update-lock writes for it.
    expect(await readFile(join(EXAMPLE_EVENTS, 'evgen.lock.json'), 'utf8')).toBe(written);
  });

  it('adds only versions not locked yet, and nothing after a failing check', async () => {
    const before = await readFile(lockFile(), 'utf8');
    const v2 = JSON.parse(await readFile(orderCreated('v2.schema.json'), 'utf8')) as {
      properties: Record<string, unknown>;
    };
    v2.properties['giftWrap'] = { type: 'boolean' };
    await writeFile(orderCreated('v3.schema.json'), JSON.stringify(v2));
    const added = await evgen('check', '--events', copy.events, '--update-lock');
    expect(added.code).toBe(0);
    expect(added.stdout).toContain('locked 1 new version in');
    const after = JSON.parse(await readFile(lockFile(), 'utf8')) as {
      events: Record<string, Record<string, string>>;
    };
    const previous = JSON.parse(before) as typeof after;
    expect(Object.keys(after.events['order/OrderCreated']!)).toEqual(['1', '2', '3']);
    expect(after.events['order/OrderCreated']!['1']).toBe(
      previous.events['order/OrderCreated']!['1'],
    );

    v2.properties['giftWrap'] = { type: 'string' };
    await writeFile(orderCreated('v4.schema.json'), JSON.stringify(v2));
    const locked = await readFile(lockFile(), 'utf8');
    const failing = await evgen('check', '--events', copy.events, '--update-lock');
    expect(failing.code).toBe(1);
    expect(failing.stderr).toContain('evgen.lock.json not updated');
    expect(await readFile(lockFile(), 'utf8')).toBe(locked);
  });
});

describe('evgen check with a lock and no git', () => {
  it('reports an edit of a locked version in its own file (text and json, exit 1)', async () => {
    const v1 = orderCreated('v1.schema.json');
    await writeFile(v1, (await readFile(v1, 'utf8')).replace('"minItems": 1', '"minItems": 2'));
    const text = await evgen('check', '--events', copy.events);
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(
      /events\/order\/OrderCreated\/v1\.schema\.json: RELEASED_VERSION_CHANGED: v1 of order\.OrderCreated was released \(locked in [^)]*evgen\.lock\.json\) and has changed/,
    );
    const json = JSON.parse(
      (await evgen('check', '--events', copy.events, '--format', 'json')).stdout,
    ) as JsonReport;
    expect(json.violations[0]).toMatchObject({ code: 'RELEASED_VERSION_CHANGED', version: 1 });
    expect(json.violations[0]!.file).toMatch(/OrderCreated\/v1\.schema\.json$/);
  });

  it('counts an edit of a shared schema a locked version references, and a deleted version', async () => {
    const money = join(copy.events, '_common', 'money.schema.json');
    await writeFile(money, (await readFile(money, 'utf8')).replace('^[A-Z]{3}$', '^[A-Z]{2,3}$'));
    // A version locked (released) and then deleted from the folder.
    const lock = JSON.parse(await readFile(lockFile(), 'utf8')) as {
      events: Record<string, Record<string, string>>;
    };
    lock.events['order/OrderCreated']!['3'] = lock.events['order/OrderCreated']!['2']!;
    await writeFile(lockFile(), JSON.stringify(lock));
    const json = JSON.parse(
      (await evgen('check', '--events', copy.events, '--format', 'json')).stdout,
    ) as JsonReport;
    const codes = json.violations.map((violation) => `${violation.code} ${violation.file}`);
    expect(codes).toContainEqual(
      expect.stringMatching(/^RELEASED_VERSION_CHANGED .*OrderPaid\/v1\.schema\.json$/),
    );
    expect(codes).toContainEqual(
      expect.stringMatching(/^RELEASED_VERSION_DELETED .*OrderCreated\/v3\.schema\.json$/),
    );
  });

  it('a damaged lock is a located bad-lock problem (exit 2) in every format', async () => {
    await writeFile(
      lockFile(),
      '{"lockVersion": 1, "events": {"order/OrderPaid": {"1": "md5:x"}}}',
    );
    const json = await evgen('check', '--events', copy.events, '--format', 'json');
    expect(json.code).toBe(2);
    const report = JSON.parse(json.stdout) as JsonReport;
    expect(report.problems).toEqual([
      expect.objectContaining({ code: 'bad-lock', pointer: '/events/order~1OrderPaid/1' }),
    ]);
    const github = await evgen('check', '--events', copy.events, '--format', 'github');
    expect(github.code).toBe(2);
    expect(github.stdout).toMatch(/^::error file=[^,]*evgen\.lock\.json,title=bad-lock at /m);
    await writeFile(lockFile(), 'not json');
    const text = await evgen('check', '--events', copy.events);
    expect(text.code).toBe(2);
    expect(text.stderr).toMatch(/evgen\.lock\.json: bad-lock: the lock is not valid JSON/);
  });
});

describe('checkCatalog with a lock', () => {
  it('reports a version --against already reports once', () => {
    const v1 = payload({ note: { type: 'string' } });
    const edited = payload({ note: { type: 'string', maxLength: 3 } });
    const released = catalogOf(eventWith([v1]));
    const current = catalogOf(eventWith([edited]));
    const lock = {
      file: 'events/evgen.lock.json',
      events: new Map([['test/Thing', new Map([[1, versionHash(v1)]])]]),
    };
    const both = checkCatalog(current, { against: released, lock });
    expect(both.violations.map((violation) => violation.code)).toEqual([
      'RELEASED_VERSION_CHANGED',
    ]);
    expect(checkCatalog(current, { lock }).violations[0]!.message).toContain(
      '(locked in events/evgen.lock.json)',
    );
    expect(checkCatalog(catalogOf(eventWith([v1])), { lock }).ok).toBe(true);
  });
});
