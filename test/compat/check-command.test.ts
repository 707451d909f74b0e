/**
 * `evgen check` and `evgen diff` on temporary copies of the example catalog: exit codes, the
 * precise report for each kind of breaking change, and the three output formats.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { evgen, exampleCopy } from './support/cli-run.js';

type Schema = {
  properties: Record<string, Record<string, unknown>>;
  required: string[];
  [key: string]: unknown;
};

let copy: Awaited<ReturnType<typeof exampleCopy>>;
const orderCreated = () => join(copy.events, 'order', 'OrderCreated');

beforeEach(async () => {
  copy = await exampleCopy();
});
afterEach(async () => {
  await copy.dispose();
});

/** Writes OrderCreated v3 as v2 changed by `edit`. */
async function addV3(edit: (schema: Schema) => void): Promise<string> {
  const schema = JSON.parse(
    await readFile(join(orderCreated(), 'v2.schema.json'), 'utf8'),
  ) as Schema;
  edit(schema);
  const file = join(orderCreated(), 'v3.schema.json');
  await writeFile(file, `${JSON.stringify(schema, null, 2)}\n`);
  return file;
}

describe('evgen check', () => {
  it('passes the example catalog (OrderCreated v2 adds an optional field)', async () => {
    const result = await evgen('check', '--events', copy.events);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^evgen check: compatible \(6 events, 1 version pairs checked\)$/m,
    );
  });

  it('remembers in the build cache which schemas compiled and how versions bundled, and reports the same with and without it', async () => {
    const cache = join(copy.dir, 'cache');
    const cold = await evgen('check', '--events', copy.events, '--cache-dir', cache);
    const remembered = await readdir(join(cache, 'compiled-schemas'));
    expect(remembered).toHaveLength(1);
    // A cache entry: its digest on the first line, its JSON after it.
    const entry = await readFile(join(cache, 'compiled-schemas', remembered[0]!), 'utf8');
    const keys = (JSON.parse(entry.slice(entry.indexOf('\n') + 1)) as { keys: string[] }).keys;
    // Every version of the example catalog compiled, and how each bundled is remembered.
    expect(keys.length).toBeGreaterThanOrEqual(7);
    expect(await readdir(join(cache, 'loaded-versions'))).toHaveLength(1);
    const warm = await evgen('check', '--events', copy.events, '--cache-dir', cache);
    const uncached = await evgen('check', '--events', copy.events, '--no-cache');
    expect(warm).toEqual(cold);
    expect(uncached).toEqual(cold);
    expect(cold.code).toBe(0);
  });

  it('passes another compatible evolution: v3 adds one more optional field', async () => {
    await addV3((schema) => {
      schema.properties['giftWrap'] = { type: 'boolean' };
    });
    const result = await evgen('check', '--events', copy.events);
    expect(result.code).toBe(0);
  });

  it('fails when a new version removes a required field', async () => {
    await addV3((schema) => {
      delete schema.properties['customerId'];
      schema.required = schema.required.filter((name) => name !== 'customerId');
    });
    const result = await evgen('check', '--events', copy.events);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      // The property no longer exists in v3: the pointer names the place it was removed from.
      'events/order/OrderCreated/v3.schema.json#/properties: REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL: v3 removes required property "customerId"; consumers still on v1 require it (forward; named as Confluent does, with v1 as the reader)',
    );
    expect(result.stdout).toContain(
      'hint: keep sending "customerId" (keep it required) until no consumer on v1 remains',
    );
    // FULL_TRANSITIVE forbids it in any order; the text names the mode that would allow it.
    expect(result.stdout).toContain(
      'deploy: no order makes it allowed under FULL_TRANSITIVE: the change is backward-compatible only (with compatibility BACKWARD_TRANSITIVE it would pass, deploying consumers first)',
    );
    expect(result.stdout).toMatch(/^evgen check: 2 violations /m);
  });

  it('fails when a new version changes a type', async () => {
    await addV3((schema) => {
      schema.properties['placedAt'] = { type: 'integer' };
    });
    const result = await evgen('check', '--events', copy.events);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      'v3.schema.json#/properties/placedAt: TYPE_CHANGED: v3 changes the type of "placedAt" (TYPE_CHANGED); consumers on v3 cannot read data written with v1 (backward)',
    );
    expect(result.stdout).toContain('deploy: no deploy order is safe');
  });

  it('fails when a new version narrows an enum', async () => {
    await addV3((schema) => {
      schema.properties['channel'] = { type: 'string', enum: ['web', 'mobile'] };
    });
    const result = await evgen('check', '--events', copy.events);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      'v3.schema.json#/properties/channel/enum: ENUM_ARRAY_NARROWED: v3 removes allowed values of "channel"; data written with v2 may carry them (backward)',
    );
  });

  it('fails when a new version adds a required field without a default, and reports every violation', async () => {
    await addV3((schema) => {
      schema.properties['priority'] = { type: 'integer' };
      schema.required.push('priority');
      schema.properties['placedAt'] = { type: 'integer' };
    });
    const result = await evgen('check', '--events', copy.events);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      'v3.schema.json#/properties/priority: REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL: v3 adds required property "priority"; data written with v1 does not have it (backward)',
    );
    expect(result.stdout).toContain(
      'hint: make "priority" optional (a default does not help: evgen readers fill nothing in), or add a new event type',
    );
    // FULL_TRANSITIVE: v3 against v1 and v2, both directions for the type change.
    expect(result.stdout).toMatch(/^evgen check: 6 violations /m);
  });

  it('refuses a required field even with a default (readers validate what was sent; they fill in no defaults)', async () => {
    await addV3((schema) => {
      schema.properties['priority'] = { type: 'integer', default: 0 };
      schema.required.push('priority');
    });
    const result = await evgen('check', '--events', copy.events);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL/);
    expect(
      (await evgen('check', '--events', copy.events, '--policy', 'confluent')).stdout,
    ).not.toMatch(/REQUIRED_PROPERTY_WITH_DEFAULT_ADDED/);
  });

  it('--format json is a stable, sorted machine-readable report', async () => {
    await addV3((schema) => {
      schema.properties['placedAt'] = { type: 'integer' };
      schema.properties['channel'] = { type: 'string', enum: ['web'] };
    });
    const first = await evgen('check', '--events', copy.events, '--format', 'json');
    const second = await evgen('check', '--events', copy.events, '--format', 'json');
    expect(first.code).toBe(1);
    expect(first.stdout).toBe(second.stdout);
    const report = JSON.parse(first.stdout) as {
      ok: boolean;
      violations: {
        file: string;
        pointer: string;
        code: string;
        against: number;
        direction: string;
        deployFirst: string;
      }[];
    };
    expect(report.ok).toBe(false);
    expect(report.violations.map((v) => [v.pointer, v.code, v.against, v.direction])).toEqual([
      ['/properties/channel/enum', 'ENUM_ARRAY_NARROWED', 1, 'backward'],
      ['/properties/channel/enum', 'ENUM_ARRAY_NARROWED', 2, 'backward'],
      ['/properties/placedAt', 'TYPE_CHANGED', 1, 'backward'],
      ['/properties/placedAt', 'TYPE_CHANGED', 1, 'forward'],
      ['/properties/placedAt', 'TYPE_CHANGED', 2, 'backward'],
      ['/properties/placedAt', 'TYPE_CHANGED', 2, 'forward'],
    ]);
    expect(Object.keys(report.violations[0]!)).toEqual([
      'severity',
      'code',
      'file',
      'pointer',
      'message',
      'hint',
      'path',
      'deployFirst',
      'eventType',
      'version',
      'against',
      'direction',
      'mode',
      'policy',
    ]);
  });

  it('--format github prints one workflow annotation per violation', async () => {
    await addV3((schema) => {
      schema.properties['placedAt'] = { type: 'integer' };
    });
    const result = await evgen('check', '--events', copy.events, '--format', 'github');
    expect(result.code).toBe(1);
    const annotations = result.stdout.split('\n').filter((line) => line.startsWith('::error '));
    expect(annotations.length).toBeGreaterThanOrEqual(4);
    expect(annotations[0]).toMatch(
      /^::error file=[^,]*events\/order\/OrderCreated\/v3\.schema\.json,title=TYPE_CHANGED at #\/properties\/placedAt::.*%0Ahint: .*%0Adeploy: /,
    );
  });

  it('--policy confluent judges like Schema Registry STRICT (closed model gains a property: FULL fails)', async () => {
    const result = await evgen('check', '--events', copy.events, '--policy', 'confluent');
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      'v2.schema.json#/properties/couponCode: PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL: v2 adds property "couponCode"; consumers still on v1 reject it, as v1 closes the object (forward; named as Confluent does, with v1 as the reader)',
    );
    expect(
      (await evgen('check', '--events', copy.events, '--policy', 'confluent-lenient')).code,
    ).toBe(0);
  });

  it('exits 2 on usage errors and on an invalid catalog', async () => {
    expect((await evgen('check', '--events', copy.events, '--policy', 'strictest')).code).toBe(2);
    expect((await evgen('check', '--events', copy.events, '--format', 'xml')).code).toBe(2);
    const missing = await evgen('check', '--events', join(copy.dir, 'nope'));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('the events folder does not exist');
  });
});

describe('evgen diff', () => {
  it('lists the differences and exits 0 for a compatible pair', async () => {
    const result = await evgen(
      'diff',
      join(orderCreated(), 'v1.schema.json'),
      join(orderCreated(), 'v2.schema.json'),
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      'OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/couponCode',
    );
    expect(result.stdout).toContain('evgen diff: compatible under FULL (policy evgen)');
  });

  it('exits 1 for an incompatible pair, per mode and policy', async () => {
    const v3 = await addV3((schema) => {
      schema.properties['channel'] = { type: 'string', enum: ['web', 'mobile', 'store', 'phone'] };
    });
    const v2 = join(orderCreated(), 'v2.schema.json');
    expect((await evgen('diff', v2, v3, '--mode', 'BACKWARD')).code).toBe(0);
    const forward = await evgen('diff', v2, v3, '--mode', 'FORWARD', '--format', 'json');
    expect(forward.code).toBe(1);
    const body = JSON.parse(forward.stdout) as {
      compatible: boolean;
      changes: { type: string; path: string }[];
      forward: { incompatibleChanges: unknown[] };
    };
    expect(body.compatible).toBe(false);
    expect(body.changes).toContainEqual({
      type: 'ENUM_ARRAY_EXTENDED',
      path: '#/properties/channel/enum',
    });
    expect(body.forward.incompatibleChanges).toEqual([
      { type: 'ENUM_ARRAY_NARROWED', path: '#/properties/channel/enum' },
    ]);
  });

  it('exits 2 for an unreadable or invalid file', async () => {
    const missing = await evgen(
      'diff',
      join(copy.dir, 'missing.json'),
      join(orderCreated(), 'v1.schema.json'),
    );
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/cannot read .*missing\.json: ENOENT/);
    const broken = join(copy.dir, 'broken.json');
    await writeFile(broken, '{"type": ');
    const invalid = await evgen('diff', broken, join(orderCreated(), 'v1.schema.json'));
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain('is not valid JSON');
  });
});
