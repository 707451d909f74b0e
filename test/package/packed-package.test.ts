/**
 * The released package, used the way the README tells a service to use it: packed with
 * `npm pack`, installed into a fresh ESM service outside the repository, its CLI run from the
 * installed bin file, the generated code and `evgen-runtime` compiled with strict NodeNext `tsc`
 * into an outDir and run under plain `node` (no tsx, no vitest aliases).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, posix } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  REPO,
  exec,
  packAndInstall,
  packedFileList,
  readPackageJson,
  type PackedInstall,
} from './packed-install.js';

describe('npm pack of the repository', () => {
  it('ships the package, not the repository (no tests, example catalog or CI files)', async () => {
    const files = await packedFileList(REPO);
    expect(files).toContain('package.json');
    expect(files).toContain('README.md');
    const unwanted = files.filter((file) =>
      /^(test|events|generated|\.ci|node_modules)\//.test(file),
    );
    expect(unwanted).toEqual([]);
  });
});

describe('the packed package installed into a service', () => {
  let packed: PackedInstall;
  beforeAll(async () => {
    packed = await packAndInstall();
  }, 120_000);
  afterAll(async () => {
    await packed?.remove();
  });

  it('contains every bin and exports target and every template', async () => {
    const pkg = await readPackageJson();
    const targets = [
      ...Object.values(pkg.bin),
      ...Object.values(pkg.exports).flatMap((entry) => [entry.types, entry.default]),
    ].map((path) => posix.normalize(path));
    expect(targets.filter((path) => !packed.files.includes(path))).toEqual([]);
    const repoTemplates = templateNames(join(REPO, 'templates'));
    expect(repoTemplates.length).toBeGreaterThan(0);
    expect(repoTemplates.filter((name) => !packed.files.includes(`templates/${name}`))).toEqual([]);
    const bin = Object.values(pkg.bin)[0];
    expect(readFileSync(join(packed.installed, bin ?? 'missing'), 'utf8').split('\n')[0]).toBe(
      '#!/usr/bin/env node',
    );
  });

  it('ships the sources its source maps point to', () => {
    const missing: string[] = [];
    for (const map of packed.files.filter((file) => file.endsWith('.js.map'))) {
      const { sources } = JSON.parse(readFileSync(join(packed.installed, map), 'utf8')) as {
        sources: string[];
      };
      for (const source of sources) {
        const path = posix.normalize(posix.join(posix.dirname(map), source));
        if (!packed.files.includes(path)) missing.push(`${map} → ${path}`);
      }
    }
    expect(missing.slice(0, 5)).toEqual([]);
  });

  it('builds, scaffolds, compiles with tsc into an outDir and runs under plain node', async () => {
    const app = packed.app;
    const cli = join(packed.installed, 'dist/cli/main.js');
    await writeFiles(app, SERVICE_FILES);

    await exec(process.execPath, [cli, 'check'], app);
    await exec(process.execPath, [cli, 'build'], app);
    await exec(process.execPath, [cli, 'scaffold'], app);
    expect(existsSync(join(app, 'generated/billing/invoice-issued/validators.js'))).toBe(true);
    expect(existsSync(join(app, 'handlers/billing-notifier/index.ts'))).toBe(true);

    const tsc = join(REPO, 'node_modules/typescript/bin/tsc');
    await exec(process.execPath, [tsc, '-p', 'tsconfig.json'], app);
    const { stdout } = await exec(process.execPath, ['dist/src/main.js'], app);
    expect(JSON.parse(stdout)).toEqual({
      eventType: 'billing.InvoiceIssued',
      parsed: true,
      rejected: 'ValidationError',
      outboxStatus: 'READY',
      consumerType: 'function',
      engine: 'function',
    });
  }, 120_000);
});

function templateNames(dir: string): string[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.hbs'))
    .sort();
}

async function writeFiles(root: string, files: Readonly<Record<string, string>>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), content);
  }
}

/** A small service of its own (not the example catalog), as the README describes one. */
const SERVICE_FILES: Readonly<Record<string, string>> = {
  'events/billing/InvoiceIssued/event.json': JSON.stringify({
    description: 'An invoice was issued.',
    aggregate: 'Invoice',
    aggregateId: 'invoiceId',
    kafka: { topic: 'billing.events' },
    rabbitmq: { exchange: 'billing', routingKey: 'billing.invoice-issued' },
  }),
  'events/billing/InvoiceIssued/v1.schema.json': JSON.stringify({
    type: 'object',
    properties: {
      invoiceId: { type: 'string', format: 'uuid' },
      amountCents: { type: 'integer', minimum: 0 },
    },
    required: ['invoiceId', 'amountCents'],
    additionalProperties: false,
  }),
  'events/_consumers/billing-notifier.json': JSON.stringify({
    description: 'Mails every issued invoice.',
    subscribes: ['billing.InvoiceIssued'],
  }),
  // What the README asks of a service that compiles into an outDir.
  'tsconfig.json': JSON.stringify({
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      noUncheckedIndexedAccess: true,
      skipLibCheck: true,
      allowJs: true,
      outDir: 'dist',
      rootDir: '.',
    },
    include: ['src', 'generated', 'handlers'],
  }),
  'src/main.ts': `import { PGlite } from '@electric-sql/pglite';
import { diffSchemas } from 'evgen';
import { ValidationError, findOutboxEvent, migrateOutbox, pgliteDatabase } from 'evgen-runtime';
import { invoiceIssuedV1, parseEnvelope } from '../generated/index.js';
import { writeInvoiceIssuedV1 } from '../generated/billing/invoice-issued/outbox.js';
import { createBillingNotifierConsumer } from '../generated/consumers/billing-notifier.js';
import { handlers, upcasters } from '../handlers/billing-notifier/index.js';

const invoiceId = '0b9f4c1e-6d3a-4f3e-9a53-2b1c7d9e8f01';
const envelope = invoiceIssuedV1({ invoiceId, amountCents: 1200 });
const parsed = parseEnvelope(JSON.stringify(envelope));
let rejected = 'nothing';
try {
  invoiceIssuedV1({ invoiceId: 'not-a-uuid', amountCents: -1 });
} catch (error) {
  rejected = error instanceof ValidationError ? error.name : String(error);
}
const lite = new PGlite();
const db = pgliteDatabase(lite);
await migrateOutbox(db);
const written = await db.transaction((tx) => writeInvoiceIssuedV1(tx, { invoiceId, amountCents: 5 }));
const row = await findOutboxEvent(db, written.messageId);
const consumer = createBillingNotifierConsumer({ db, handlers, upcasters });
await lite.close();
console.log(JSON.stringify({
  eventType: envelope.eventType,
  parsed: parsed.ok,
  rejected,
  outboxStatus: row?.status,
  consumerType: typeof consumer.handle,
  engine: typeof diffSchemas,
}));
`,
};
