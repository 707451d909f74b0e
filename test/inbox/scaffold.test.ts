/**
 * `evgen scaffold`: stubs are created once, compile against the generated consumer module, are
 * never overwritten, and a new event version is added to the user's file with every line the
 * user wrote left byte-identical.
 */
import { runTarget } from '../support/run-target.js';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Catalog } from 'evgen';
import { consumersTarget } from '../../src/codegen/targets/consumers.js';
import { planScaffold, type ScaffoldPlan } from '../../src/scaffold/index.js';
import { runCli } from '../../src/cli/main.js';
import { parcelCatalog, writeParcelEnvelopeModules } from './support/parcel-catalog.js';
import { typecheck } from '../support/typecheck.js';

const base = fileURLToPath(
  new URL(`./fixtures/${randomBytes(4).toString('hex')}/out/`, import.meta.url),
);
const generatedDir = join(base, 'generated');
const handlersDir = join(base, 'handlers');

async function generate(catalog: Catalog): Promise<void> {
  for (const file of await runTarget(consumersTarget, {
    catalog,
    runtimeImport: 'evgen/runtime',
  })) {
    mkdirSync(dirname(join(generatedDir, file.path)), { recursive: true });
    writeFileSync(join(generatedDir, file.path), file.content);
  }
}

function scaffold(catalog: Catalog): Promise<ScaffoldPlan> {
  return planScaffold(catalog, {
    handlersDir: 'handlers',
    generatedDir: 'generated',
    runtimeImport: 'evgen/runtime',
    readFile: (path) =>
      existsSync(join(handlersDir, path))
        ? readFileSync(join(handlersDir, path), 'utf8')
        : undefined,
  });
}

function apply(plan: ScaffoldPlan): void {
  for (const change of plan.changes) {
    mkdirSync(dirname(join(handlersDir, change.path)), { recursive: true });
    writeFileSync(join(handlersDir, change.path), change.content);
  }
}

const read = (path: string) => readFileSync(join(handlersDir, path), 'utf8');

beforeAll(() => {
  mkdirSync(generatedDir, { recursive: true });
  writeParcelEnvelopeModules(generatedDir);
});
afterAll(() => {
  rmSync(join(base, '..'), { recursive: true, force: true });
});

// The user's implementation of the v1 handler, with formatting prettier would change and CRLF-free odd spacing.
const userHandlerV1 = `export const handleParcelSentV1: ParcelTrackerParcelSentV1Handler = async (envelope, ctx) => {
    // my own logic   (keep this spacing)   
    await ctx.tx.query( 'SELECT $1::int' , [ envelope.payload.weightGrams ] );
};
`;

describe('scaffold', () => {
  it('creates handler, upcaster and wiring stubs that type-check, and explains what the guard guarantees', async () => {
    await generate(parcelCatalog([1]));
    const plan = await scaffold(parcelCatalog([1]));
    expect(plan.changes.map((c) => [c.path, c.action, c.added])).toEqual([
      ['parcel-tracker/index.ts', 'create', ['handlers', 'upcasters']],
      ['parcel-tracker/parcel-lost.ts', 'create', ['handleParcelLostV1']],
      ['parcel-tracker/parcel-sent.ts', 'create', ['handleParcelSentV1']],
    ]);
    apply(plan);
    const stub = read('parcel-tracker/parcel-sent.ts');
    expect(stub).toContain("from '../../generated/consumers/parcel-tracker.js'");
    expect(stub).toContain('At most once per messageId for consumer parcel-tracker');
    expect(stub).toContain('write through ctx.tx only');
    expect(stub).toContain('Ack after commit');
    expect(stub).toContain(
      "throw new NonRetryableError(\n    'parcel-tracker: handler for parcel.ParcelSent v1 is not implemented'",
    );
    expect(typecheck([join(handlersDir, 'parcel-tracker/index.ts')])).toEqual([]);
  });

  it('never overwrites: a second run changes nothing, user edits included', async () => {
    const path = 'parcel-tracker/parcel-sent.ts';
    const stub = read(path);
    const start = stub.indexOf('/** Handles parcel.ParcelSent version 1. */');
    writeFileSync(
      join(handlersDir, path),
      `${stub.slice(0, start)}// a line I added\n${userHandlerV1}`,
    );
    const before = read(path);
    const plan = await scaffold(parcelCatalog([1]));
    expect(plan.changes).toEqual([]);
    expect(read(path)).toBe(before);
  });

  it('adds the handler for a new version and the upcaster stub, leaving every user line byte-identical', async () => {
    const path = 'parcel-tracker/parcel-sent.ts';
    const original = read(path);
    const originalIndex = read('parcel-tracker/index.ts');
    await generate(parcelCatalog([1, 2]));
    const plan = await scaffold(parcelCatalog([1, 2]));
    expect(plan.changes.map((c) => [c.path, c.action, c.added])).toEqual([
      ['parcel-tracker/parcel-sent.ts', 'extend', ['handleParcelSentV2']],
      ['parcel-tracker/upcasters/parcel-sent.ts', 'create', ['parcelSentV1ToV2']],
    ]);
    expect(plan.notes).toEqual([
      'parcel-tracker: wire the new stubs into parcel-tracker/index.ts: handleParcelSentV2 (parcel-tracker/parcel-sent.ts), parcelSentV1ToV2 (parcel-tracker/upcasters/parcel-sent.ts)',
    ]);
    apply(plan);
    const updated = read(path);
    // updated = original[0:k] + one new import line + original[k:] + appended stub: nothing of the user's changed.
    const importLine =
      "import type { ParcelTrackerParcelSentV2Handler } from '../../generated/consumers/parcel-tracker.js';\n";
    const k = updated.indexOf(importLine);
    expect(k).toBeGreaterThan(0);
    expect(updated.slice(0, k)).toBe(original.slice(0, k));
    expect(updated.slice(k + importLine.length, k + importLine.length + original.length - k)).toBe(
      original.slice(k),
    );
    const appended = updated.slice(k + importLine.length + original.length - k);
    expect(appended).toMatch(
      /^\n\/\*\* Handles parcel\.ParcelSent version 2\. \*\/\nexport const handleParcelSentV2: ParcelTrackerParcelSentV2Handler = async/,
    );
    expect(updated).toContain(userHandlerV1);
    expect(read('parcel-tracker/index.ts')).toBe(originalIndex);

    // Idempotent again after the addition.
    expect((await scaffold(parcelCatalog([1, 2]))).changes).toEqual([]);

    // Once the user wires v2 (as the note says), everything type-checks against the new generated module.
    writeFileSync(
      join(handlersDir, 'parcel-tracker/index.ts'),
      originalIndex
        .replace(
          "import { handleParcelSentV1 } from './parcel-sent.js';",
          "import { handleParcelSentV1, handleParcelSentV2 } from './parcel-sent.js';\nimport { parcelSentV1ToV2 } from './upcasters/parcel-sent.js';",
        )
        .replace(
          "'parcel.ParcelSent': { 1: handleParcelSentV1 }",
          "'parcel.ParcelSent': { 1: handleParcelSentV1, 2: handleParcelSentV2 }",
        )
        .replace(
          'export const upcasters: ParcelTrackerUpcasters = {};',
          "export const upcasters: ParcelTrackerUpcasters = { 'parcel.ParcelSent': { v1ToV2: parcelSentV1ToV2 } };",
        ),
    );
    expect(typecheck([join(handlersDir, 'parcel-tracker/index.ts')])).toEqual([]);
  });

  it('adds a missing stub to a file without imports or final newline, and reuses imports the user has', async () => {
    const path = 'parcel-tracker/parcel-lost.ts';
    writeFileSync(join(handlersDir, path), '// nothing here yet');
    let plan = await scaffold(parcelCatalog([1, 2]));
    let change = plan.changes.find((c) => c.path === path)!;
    expect(
      change.content.startsWith(
        "import { NonRetryableError } from 'evgen/runtime';\nimport type { ParcelTrackerParcelLostV1Handler }",
      ),
    ).toBe(true);
    expect(change.content).toContain(
      '\n// nothing here yet\n\n/** Handles parcel.ParcelLost version 1. */',
    );

    const withImports =
      "import { NonRetryableError as Oops } from 'evgen/runtime';\nimport { NonRetryableError } from 'evgen/runtime';\n\nconst x = 1;";
    writeFileSync(join(handlersDir, path), withImports);
    plan = await scaffold(parcelCatalog([1, 2]));
    change = plan.changes.find((c) => c.path === path)!;
    expect(
      change.content.startsWith(
        `${withImports.split('\n').slice(0, 2).join('\n')}\nimport type { ParcelTrackerParcelLostV1Handler }`,
      ),
    ).toBe(true);
    expect(change.content.match(/import \{ NonRetryableError \}/g)).toHaveLength(1);
  });
});

describe('evgen scaffold (CLI)', () => {
  it('writes stubs for the example catalog, then nothing on the second run', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'evgen-scaffold-'));
    try {
      const events = fileURLToPath(new URL('../../events', import.meta.url));
      const args = [
        'scaffold',
        '--events',
        events,
        '--handlers',
        join(dir, 'src/handlers'),
        '--out',
        join(dir, 'src/generated'),
      ];
      expect(await runCli(args)).toBe(0);
      const created = readFileSync(
        join(dir, 'src/handlers/inventory-service/order-created.ts'),
        'utf8',
      );
      expect(created).toContain(
        "import type { InventoryServiceOrderCreatedV2Handler } from '../../generated/consumers/inventory-service.js';",
      );
      expect(
        existsSync(join(dir, 'src/handlers/inventory-service/upcasters/order-created.ts')),
      ).toBe(true);
      expect(existsSync(join(dir, 'src/handlers/shipping-service/index.ts'))).toBe(true);
      writeFileSync(join(dir, 'src/handlers/inventory-service/order-created.ts'), '// mine\n');
      expect(await runCli(args)).toBe(0);
      const mine = readFileSync(
        join(dir, 'src/handlers/inventory-service/order-created.ts'),
        'utf8',
      );
      expect(mine.startsWith("import { NonRetryableError } from 'evgen-runtime';")).toBe(true);
      expect(mine).toContain('// mine\n');
      expect(await runCli(args)).toBe(0);
      expect(
        readFileSync(join(dir, 'src/handlers/inventory-service/order-created.ts'), 'utf8'),
      ).toBe(mine);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
