/**
 * Producer and consumer in two repositories, joined by a catalog package: the producer ("orders")
 * packs its catalog with `npm pack` (its prepack script is `evgen catalog check-package`), the
 * consumer ("billing") installs the tarball with `npm install` (offline, from the file) and
 * builds from it. Then the producer evolves its catalog, compatibly and incompatibly (the case a
 * user met: mode set to NONE and a field's type changed), and the consumer's `evgen check` judges
 * each upgrade, while the consumer's generated consumer, built from the first package, handles
 * what the producer's generated outbox writer wrote, relayed through the in-process broker, on
 * the real PostgreSQL.
 *
 * The repositories live under fixtures/ beside this file, so generated validators resolve ajv
 * like a user's project does.
 */
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  InProcessBroker,
  createOutboxRelay,
  migrateInbox,
  migrateOutbox,
  postgresDatabase,
  type Database,
  type Envelope,
  type OutboxRelay,
} from 'evgen/runtime';
import { eventJson, payloadSchema, writeFiles } from '../catalog/temp-catalog.js';
import { runCliCaptured } from '../cli/capture-output.js';
import { createTestSchema, type TestSchema } from '../support/postgres.js';

const run = promisify(execFile);
const tsx = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));
const cliMain = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const root = fileURLToPath(
  new URL(`./fixtures/two-repos-${randomBytes(4).toString('hex')}/`, import.meta.url),
);
const producer = join(root, 'orders');
const consumer = join(root, 'billing');
const packages = join(root, 'packed');

const amount = { type: 'integer', minimum: 0 };

/** Runs evgen in a repository (in this process, with the repository's config). */
async function evgen(repo: string, ...argv: string[]) {
  return runCliCaptured(...argv, '--config', join(repo, 'evgen.config.json'), '--no-cache');
}

/** `npm pack` in the producer's catalog package: runs its prepack check; returns the tarball. */
async function packCatalog(version: string): Promise<string> {
  await writeFiles(join(producer, 'catalog'), { 'package.json': catalogPackageJson(version) });
  await run('npm', ['pack', '--pack-destination', packages], { cwd: join(producer, 'catalog') });
  return join(packages, `acme-orders-catalog-${version}.tgz`);
}

/** `npm install` of a tarball in the consumer, offline: nothing comes from a registry. */
async function install(tarball: string): Promise<void> {
  await run(
    'npm',
    [
      'install',
      '--save-exact',
      '--offline',
      '--no-audit',
      '--no-fund',
      '--ignore-scripts',
      tarball,
    ],
    { cwd: consumer },
  );
}

function catalogPackageJson(version: string) {
  return {
    name: '@acme/orders-catalog',
    version,
    description: 'The orders service event catalog.',
    files: ['events'],
    evgen: { catalog: 'events' },
    scripts: { prepack: `${tsx} ${cliMain} catalog check-package` },
  };
}

let pg: TestSchema;
let db: Database;
const relays: OutboxRelay[] = [];

beforeAll(async () => {
  await mkdir(packages, { recursive: true });
  await writeFiles(producer, {
    'evgen.config.json': { events: 'catalog/events', out: 'generated-1' },
  });
  await writeFiles(join(producer, 'catalog/events'), {
    'order/OrderPaid/event.json': eventJson('order', 'OrderPaid'),
    'order/OrderPaid/v1.schema.json': payloadSchema(
      { amount },
      { required: ['orderId', 'amount'] },
    ),
  });
  await writeFiles(consumer, {
    'package.json': { name: 'billing', version: '1.0.0', private: true },
    'evgen.config.json': { catalogs: { orders: '@acme/orders-catalog' } },
  });
  await writeFiles(join(consumer, 'events'), {
    '_consumers/billing.json': {
      description: 'Bills paid orders.',
      subscribes: ['order.OrderPaid'],
    },
  });
  pg = await createTestSchema('evgen_two_repos');
  db = postgresDatabase(pg.pool);
  await migrateOutbox(db, { schema: pg.schema });
  await migrateInbox(db, { schema: pg.schema });
}, 120_000);

afterAll(async () => {
  for (const relay of relays) await relay.stop();
  await pg?.drop();
  await rm(root, { recursive: true, force: true });
});

/** The producer's generated writer of one version, from the build in `out`. */
async function writer(out: string, version: number) {
  const module = (await import(
    pathToFileURL(join(producer, out, 'order/order-paid/outbox.ts')).href
  )) as Record<
    string,
    (tx: unknown, payload: unknown, context?: unknown, options?: unknown) => Promise<Envelope>
  >;
  return module[`writeOrderPaidV${version}`]!;
}

type BillingConsumer = (options: {
  db: Database;
  handlers: Record<string, Record<number, (envelope: Envelope) => Promise<void>>>;
  inbox: { schema: string };
}) => Parameters<InProcessBroker['subscribe']>[0];

describe('a catalog package between two repositories', { timeout: 240_000 }, () => {
  let broker: InProcessBroker;
  const handled: Envelope[] = [];

  /** Writes one event with the producer's writer and waits until the broker settled it. */
  async function produce(out: string, version: number, payload: Record<string, unknown>) {
    const write = await writer(out, version);
    const written = await db.transaction((tx) =>
      write(tx, payload, undefined, { schema: pg.schema }),
    );
    await broker.waitFor(() =>
      [...broker.consumed, ...broker.deadLettered.map((letter) => letter.message)].some(
        (entry) => entry.messageId === written.messageId,
      ),
    );
    await broker.settled();
    return written;
  }

  it('packs the producer catalog, installs it in the consumer, and delivers what the producer wrote', async () => {
    expect((await evgen(producer, 'check', '--update-lock')).code).toBe(0);
    expect((await evgen(producer, 'build')).code).toBe(0);
    const tarball = await packCatalog('1.0.0');
    const listing = (await run('tar', ['-tzf', tarball])).stdout.trim().split('\n').sort();
    expect(listing).toEqual([
      'package/events/evgen.lock.json',
      'package/events/order/OrderPaid/event.json',
      'package/events/order/OrderPaid/v1.schema.json',
      'package/package.json',
    ]);

    await install(tarball);
    const consumerPackage = JSON.parse(await readFile(join(consumer, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(Object.keys(consumerPackage.dependencies)).toEqual(['@acme/orders-catalog']);
    const built = await evgen(consumer, 'build');
    expect(built.stderr).toBe('');
    expect(built.code).toBe(0);
    expect(existsSync(join(consumer, 'generated/order/order-paid/outbox.ts'))).toBe(false);
    expect(existsSync(join(consumer, 'generated/consumers/billing.ts'))).toBe(true);
    expect((await evgen(consumer, 'check', '--update-lock')).code).toBe(0);
    expect(existsSync(join(consumer, 'events/_catalogs/orders.lock.json'))).toBe(true);

    const { createBillingConsumer } = (await import(
      pathToFileURL(join(consumer, 'generated/consumers/billing.ts')).href
    )) as { createBillingConsumer: BillingConsumer };
    broker = new InProcessBroker({
      inProcess: {
        retryDelaysMs: [0],
      },
    });
    broker.subscribe(
      createBillingConsumer({
        db,
        inbox: { schema: pg.schema },
        handlers: { 'order.OrderPaid': { 1: async (envelope) => void handled.push(envelope) } },
      }),
    );
    const relay = createOutboxRelay({ db, publisher: broker.relayPublisher(), schema: pg.schema });
    relays.push(relay);
    await relay.start();

    const written = await produce('generated-1', 1, { orderId: randomUUID(), amount: 1200 });
    expect(handled.map((envelope) => [envelope.messageId, envelope.payload])).toEqual([
      [written.messageId, written.payload],
    ]);
  });

  it('refuses to pack a catalog with an unreleased version or a stray file', async () => {
    await writeFiles(join(producer, 'catalog/events'), {
      'order/OrderPaid/v2.schema.json': payloadSchema(
        { amount },
        { required: ['orderId', 'amount'] },
      ),
    });
    await writeFiles(join(producer, 'catalog'), { 'notes.txt': 'not a catalog file\n' });
    await writeFiles(join(producer, 'catalog'), {
      'package.json': { ...catalogPackageJson('1.0.1'), files: ['events', 'notes.txt'] },
    });
    const refused = await runCliCaptured('catalog', 'check-package', join(producer, 'catalog'));
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('not-a-catalog-file');
    await rm(join(producer, 'catalog/notes.txt'));
    const unreleased = await runCliCaptured('catalog', 'check-package', join(producer, 'catalog'));
    expect(unreleased.code).toBe(2);
    expect(unreleased.stderr).toContain('version-not-released');
    // npm pack stops at the prepack check and writes no tarball.
    await expect(packCatalog('1.0.1')).rejects.toThrow();
    expect(existsSync(join(packages, 'acme-orders-catalog-1.0.1.tgz'))).toBe(false);
    await rm(join(producer, 'catalog/events/order/OrderPaid/v2.schema.json'));
  });

  it('a compatible upgrade passes the consumer check, and the deployed consumer reads the new version', async () => {
    await writeFiles(join(producer, 'catalog/events'), {
      'order/OrderPaid/v2.schema.json': payloadSchema(
        { amount, note: { type: 'string' } },
        { required: ['orderId', 'amount'] },
      ),
    });
    expect((await evgen(producer, 'check', '--update-lock')).code).toBe(0);
    expect((await evgen(producer, 'build', '--out', join(producer, 'generated-2'))).code).toBe(0);
    await install(await packCatalog('1.1.0'));

    const judged = await evgen(consumer, 'check');
    expect(judged.stdout).toContain('evgen check: compatible');
    expect(judged.code).toBe(0);

    // The consumer built from 1.0.0 reads v2 with its v1 reader (FULL_TRANSITIVE promised it).
    const written = await produce('generated-2', 2, {
      orderId: randomUUID(),
      amount: 5,
      note: 'x',
    });
    expect(handled.at(-1)?.messageId).toBe(written.messageId);
    expect(broker.deadLettered).toEqual([]);
  });

  it('the producer sets NONE and changes a field type: its own check passes, the consumer check fails, and the deployed consumer would dead-letter the event', async () => {
    await writeFiles(join(producer, 'catalog/events'), {
      'order/OrderPaid/event.json': eventJson('order', 'OrderPaid', { compatibility: 'NONE' }),
      'order/OrderPaid/v3.schema.json': payloadSchema(
        { amount: { type: 'string' } },
        { required: ['orderId', 'amount'] },
      ),
    });
    const producerCheck = await evgen(producer, 'check', '--update-lock');
    expect(producerCheck.code).toBe(0);
    expect((await evgen(producer, 'build', '--out', join(producer, 'generated-3'))).code).toBe(0);
    await install(await packCatalog('2.0.0'));

    const judged = await evgen(consumer, 'check');
    expect(judged.code).toBe(1);
    expect(judged.stdout).toContain('COMPATIBILITY_MODE_CHANGED');
    expect(judged.stdout).toContain('from FULL_TRANSITIVE');
    expect(judged.stdout).toMatch(/v3\.schema\.json#\/properties\/amount: TYPE_CHANGED/);

    // What the check prevents: the consumer still deployed with 1.0.0 dead-letters v3.
    const written = await produce('generated-3', 3, { orderId: randomUUID(), amount: 'twelve' });
    expect(broker.deadLettered.map((letter) => letter.message.messageId)).toEqual([
      written.messageId,
    ]);
    expect(handled.map((envelope) => envelope.messageId)).not.toContain(written.messageId);
  });
});
