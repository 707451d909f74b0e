/**
 * The release packages, used the way the README tells a service to use them: `npm run
 * release:pack` in a copy of the repository, the README's install lines run in a fresh ESM
 * service against the npm registry, the installed CLI run, the generated code and the runtime
 * compiled with the strictest TypeScript options (`skipLibCheck: false`) into an outDir and run
 * under plain node; then the production install (`npm ci --omit=dev`) is measured and the
 * compiled service runs again on it, against the real PostgreSQL.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DATABASE_URL, uniqueName } from '../support/postgres.js';
import {
  REPO,
  createServiceWorkspace,
  exec,
  folderSize,
  packedFileList,
  readPackageJson,
  readmeLines,
  type PackageJson,
  type ServiceWorkspace,
} from './packed-install.js';

const INSTALL_HEADING = '### Install it today (from a clone)';
const MAX_PRODUCTION_BYTES = 10 * 1024 * 1024;
const NPM_QUIET = ['--no-audit', '--no-fund', '--prefer-offline'];

describe('npm pack of the repository', () => {
  it('ships the package, not the repository (no tests, example catalog, CI or scratch files)', async () => {
    const files = await packedFileList(REPO);
    expect(files).toContain('package.json');
    expect(files).toContain('README.md');
    const unwanted = files.filter((file) =>
      /^(test|events|generated|\.ci|node_modules)\/|(^|\/)fixtures\/|\.test\.ts$/.test(file),
    );
    expect(unwanted).toEqual([]);
  });
});

describe('the release packages installed into a service as the README says', () => {
  let workspace: ServiceWorkspace;
  let generator: PackageJson;
  let runtime: PackageJson;

  beforeAll(async () => {
    workspace = await createServiceWorkspace();
    const lines = await readmeLines(INSTALL_HEADING);
    // The copy made by createServiceWorkspace stands in for `git clone`, its symlinked
    // node_modules for `npm ci`; every other line runs exactly as written.
    const script = lines
      .filter((line) => !line.startsWith('git clone '))
      .map((line) => line.replace('npm ci && ', ''))
      .map((line) => (line.startsWith('npm install') ? `${line} ${NPM_QUIET.join(' ')}` : line));
    expect(script.filter((line) => line.startsWith('npm install'))).toHaveLength(2);
    await exec('sh', ['-euc', script.join('\n')], workspace.root);
    generator = await readPackageJson(join(workspace.app, 'node_modules/evgen'));
    runtime = await readPackageJson(join(workspace.app, 'node_modules/evgen-runtime'));
  }, 600_000);
  afterAll(async () => {
    await workspace?.remove();
  });

  it('puts the generator in devDependencies and the runtime in dependencies', async () => {
    const service = await readPackageJson(workspace.app);
    expect(Object.keys(service.dependencies ?? {})).toContain('evgen-runtime');
    expect(Object.keys(service.devDependencies ?? {})).toContain('evgen');
    expect(Object.keys(service.dependencies ?? {})).not.toContain('evgen');
  });

  it('packs package.json files with no scripts (nothing runs in a consumer), pinned dependencies, caret peers, no tests', async () => {
    for (const pkg of [generator, runtime]) {
      expect(pkg.scripts).toBeUndefined();
      expect(pkg.devDependencies).toBeUndefined();
      const ranges = Object.values(pkg.dependencies ?? {});
      expect(ranges.filter((range) => !/^\d+\.\d+\.\d+$/.test(range))).toEqual([]);
      const peerRanges = Object.values(pkg.peerDependencies ?? {});
      expect(peerRanges.filter((range) => !/^\^\d+\.\d+\.\d+$/.test(range))).toEqual([]);
    }
    expect(Object.keys(runtime.dependencies ?? {})).not.toContain('ts-morph');
    expect(Object.keys(runtime.dependencies ?? {})).not.toContain('@electric-sql/pglite');
    expect(Object.keys(runtime.peerDependencies ?? {})).not.toContain('@electric-sql/pglite');
    expect(runtime.peerDependencies).toMatchObject({ pg: '^8.23.1', mysql2: '^3.24.6' });
    // Loaded on demand (metrics, the Pulsar WebSocket client): optional peers, not dependencies.
    for (const name of ['prom-client', 'ws']) {
      expect(Object.keys(runtime.dependencies ?? {})).not.toContain(name);
      expect(runtime.peerDependenciesMeta?.[name], name).toEqual({ optional: true });
    }
    for (const name of ['evgen', 'evgen-runtime']) {
      const tarball = join(workspace.packages, `${name}-${generator.version}.tgz`);
      const { stdout } = await exec('tar', ['-tzf', tarball], workspace.root);
      const files = stdout.split('\n').filter((file) => file !== '');
      expect(files.length).toBeGreaterThan(10);
      expect(
        files.filter((file) => /\/(test|fixtures|\.ci)\/|\.test\.ts$|\.tgz$/.test(file)),
      ).toEqual([]);
      // The tarball is what `npm publish` would upload; a dry run must accept it as it is.
      await exec('npm', ['publish', '--dry-run', tarball], workspace.root);
    }
  }, 120_000);

  it('builds, scaffolds, compiles under the strictest TypeScript options and runs under plain node', async () => {
    const app = workspace.app;
    await writeFiles(app, SERVICE_FILES);
    await exec('npx', ['--no-install', 'evgen', 'check'], app);
    await exec('npx', ['--no-install', 'evgen', 'build'], app);
    await exec('npx', ['--no-install', 'evgen', 'scaffold'], app);
    expect(existsSync(join(app, 'generated/billing/invoice-issued/validators.js'))).toBe(true);
    expect(readFileSync(join(app, 'generated/billing/invoice-issued/outbox.ts'), 'utf8')).toContain(
      "from 'evgen-runtime'",
    );

    await exec('npx', ['--no-install', 'tsc', '-p', 'tsconfig.json'], app);
    const { stdout } = await exec(process.execPath, ['dist/src/main.js'], app, {
      DATABASE_URL: '',
    });
    expect(JSON.parse(stdout)).toEqual({ ...EXPECTED_OUTPUT, database: 'pglite' });
  }, 300_000);

  it('installs for production (npm ci --omit=dev) without the generator in ≤ 10 MB, as the README states, and runs on PostgreSQL', async () => {
    const app = workspace.app;
    await exec('rm', ['-rf', 'node_modules'], app);
    await exec('npm', ['ci', '--omit=dev', ...NPM_QUIET], app);
    // A service on pg alone: no generator, no PGlite, neither Kafka client, no metrics library
    // and no WebSocket client (optional peers).
    for (const name of [
      'evgen',
      'typescript',
      'ts-morph',
      'prettier',
      '@electric-sql/pglite',
      'kafkajs',
      '@platformatic/kafka',
      'prom-client',
      'ws',
    ]) {
      expect(existsSync(join(app, 'node_modules', name)), name).toBe(false);
    }
    const bytes = await folderSize(join(app, 'node_modules'));
    expect(bytes).toBeLessThanOrEqual(MAX_PRODUCTION_BYTES);
    const readme = await readFile(join(REPO, 'README.md'), 'utf8');
    const stated = /production install \(`npm ci --omit=dev`\) is ([\d.]+) MB/.exec(readme);
    expect(
      stated,
      `README states the size (measured ${(bytes / 1024 / 1024).toFixed(1)} MB)`,
    ).not.toBeNull();
    expect(
      Math.abs(Number(stated![1]) - bytes / 1024 / 1024),
      `README states ${stated![1]} MB, measured ${(bytes / 1024 / 1024).toFixed(1)} MB`,
    ).toBeLessThan(1);

    const schema = uniqueName('evgen_pkg');
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    try {
      await admin.query(`CREATE SCHEMA "${schema}"`);
      const url = new URL(TEST_DATABASE_URL);
      url.searchParams.set('options', `-c search_path=${schema}`);
      const { stdout } = await exec(process.execPath, ['dist/src/main.js'], app, {
        DATABASE_URL: url.toString(),
      });
      expect(JSON.parse(stdout)).toEqual({ ...EXPECTED_OUTPUT, database: 'postgres' });
      const rows = await admin.query(`SELECT status FROM "${schema}".outbox_event`);
      expect(rows.rows).toEqual([{ status: 'READY' }]);

      // Without the optional peers, what needs them says what to install (and nothing else breaks).
      const missingPeers = await exec(
        process.execPath,
        ['--input-type=module', '-e', MISSING_PEERS_SCRIPT],
        app,
      );
      const pinned = (await readPackageJson(REPO)).dependencies ?? {};
      expect(JSON.parse(missingPeers.stdout)).toEqual({
        metrics: expect.stringContaining(
          `npm install --save-exact prom-client@${pinned['prom-client']}`,
        ),
        pulsar: expect.stringContaining(`npm install --save-exact ws@${pinned.ws}`),
      });
    } finally {
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    }
  }, 300_000);
});

async function writeFiles(root: string, files: Readonly<Record<string, string>>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), content);
  }
}

/** Calls what needs prom-client and ws in a service that installed neither. */
const MISSING_PEERS_SCRIPT = `
import { createPrometheusMetrics, pulsarWebSocketClient } from 'evgen-runtime';
const failure = async (run) => {
  try { await run(); return 'no error'; } catch (error) { return error.message; }
};
console.log(JSON.stringify({
  metrics: await failure(() => createPrometheusMetrics()),
  pulsar: await failure(() =>
    pulsarWebSocketClient({ webServiceUrl: 'http://127.0.0.1:9' }).producer('persistent://t/n/x')),
}));
`;

const EXPECTED_OUTPUT = {
  eventType: 'billing.InvoiceIssued',
  parsed: true,
  rejected: 'ValidationError',
  outboxStatus: 'READY',
  consumerType: 'function',
  poolKind: 'postgres',
};

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
      note: { type: 'string' },
    },
    required: ['invoiceId', 'amountCents'],
    additionalProperties: false,
  }),
  'events/_consumers/billing-notifier.json': JSON.stringify({
    description: 'Mails every issued invoice.',
    subscribes: ['billing.InvoiceIssued'],
  }),
  // The strictest settings a service may use; the library's own .d.ts files are checked too.
  'tsconfig.json': JSON.stringify({
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      types: ['node'],
      strict: true,
      exactOptionalPropertyTypes: true,
      noUncheckedIndexedAccess: true,
      noImplicitOverride: true,
      skipLibCheck: false,
      allowJs: true,
      outDir: 'dist',
      rootDir: '.',
    },
    include: ['src', 'generated', 'handlers'],
  }),
  'src/main.ts': `import pg from 'pg';
import {
  ValidationError,
  findOutboxEvent,
  migrateOutbox,
  openDatabase,
  postgresDatabase,
} from 'evgen-runtime';
import { invoiceIssuedV1, parseEnvelope } from '../generated/index.js';
import { writeInvoiceIssuedV1 } from '../generated/billing/invoice-issued/outbox.js';
import { createBillingNotifierConsumer } from '../generated/consumers/billing-notifier.js';
import { handlers, upcasters } from '../handlers/billing-notifier/index.js';

// A pool of your own, as the README shows it (type-checked against @types/pg).
const pool = new pg.Pool({ connectionString: 'postgres://127.0.0.1:1/unused' });
const poolDatabase = postgresDatabase(pool);
await pool.end();

const invoiceId = '0b9f4c1e-6d3a-4f3e-9a53-2b1c7d9e8f01';
const envelope = invoiceIssuedV1({ invoiceId, amountCents: 1200 });
const parsed = parseEnvelope(JSON.stringify(envelope));
let rejected = 'nothing';
try {
  invoiceIssuedV1({ invoiceId: 'not-a-uuid', amountCents: -1 });
} catch (error) {
  rejected = error instanceof ValidationError ? error.name : String(error);
}
const db = await openDatabase(); // DATABASE_URL, else PGlite in memory
await migrateOutbox(db);
const written = await db.transaction((tx) => writeInvoiceIssuedV1(tx, { invoiceId, amountCents: 5 }));
const row = await findOutboxEvent(db, written.messageId);
const consumer = createBillingNotifierConsumer({ db, handlers, upcasters });
await db.close();
console.log(JSON.stringify({
  eventType: envelope.eventType,
  parsed: parsed.ok,
  rejected,
  outboxStatus: row?.status,
  consumerType: typeof consumer.handle,
  poolKind: poolDatabase.kind,
  database: db.kind,
}));
`,
};
