/**
 * `evgen-runtime/prisma` on the real PostgreSQL and MariaDB, with Prisma's client engine and its
 * driver adapters (`@prisma/adapter-pg`, `@prisma/adapter-mariadb`; no engine binary): the shared
 * data-layer contract, plus the compile-time refusal of a full PrismaClient.
 */
import { PrismaMariaDb } from '@prisma/adapter-mariadb';
import { PrismaPg } from '@prisma/adapter-pg';
import { afterAll, beforeAll } from 'vitest';
import {
  prismaDatabase,
  prismaOf,
  prismaTransaction,
  type PrismaRawClientLike,
} from 'evgen-runtime/prisma';
import {
  describeDataLayerAdapter,
  type DataLayerDialect,
  type DataLayerTarget,
} from './support/data-layer-contract.js';
import {
  generatePrismaClient,
  type GeneratedPrismaClient,
  type PrismaProvider,
} from './support/prisma-client.js';

/** The part of the generated client the test uses. */
interface TestTransactionClient extends PrismaRawClientLike {
  order: { create(args: { data: { id: string } }): Promise<unknown> };
  reservation: { create(args: { data: { orderId: string; sku: string } }): Promise<unknown> };
}
interface TestPrismaClient extends TestTransactionClient {
  $connect(): Promise<void>;
  $disconnect(): Promise<void>;
  $transaction<R>(
    work: (tx: TestTransactionClient) => Promise<R>,
    options?: { timeout?: number; maxWait?: number },
  ): Promise<R>;
}
type PrismaClientClass = new (options: { adapter: PrismaPg | PrismaMariaDb }) => TestPrismaClient;

// Interactive transactions time out after 5 s by default; the machine is shared and loaded.
const TRANSACTION_OPTIONS = { timeout: 30_000, maxWait: 30_000 };

const PROVIDERS: Record<DataLayerDialect, PrismaProvider> = {
  postgres: 'postgresql',
  mariadb: 'mysql',
};

/** A client is generated per provider, as a service generates one for its database. */
const generated = new Map<DataLayerDialect, GeneratedPrismaClient>();
beforeAll(async () => {
  for (const [dialect, provider] of Object.entries(PROVIDERS)) {
    generated.set(dialect as DataLayerDialect, await generatePrismaClient(provider));
  }
}, 240_000);
afterAll(async () => {
  await Promise.all([...generated.values()].map((client) => client.remove()));
});

/** Prisma's driver adapter for the target's server. */
function driverAdapter(target: DataLayerTarget): PrismaPg | PrismaMariaDb {
  if (target.dialect === 'mariadb') {
    const url = new URL(target.url);
    return new PrismaMariaDb({
      host: url.hostname,
      port: Number(url.port),
      user: decodeURIComponent(url.username),
      database: target.schema,
      connectionLimit: 4,
    });
  }
  return new PrismaPg({ connectionString: target.url, max: 4 }, { schema: target.schema });
}

describeDataLayerAdapter('Prisma', {
  async open(target) {
    const PrismaClient = generated.get(target.dialect)!.module.PrismaClient as PrismaClientClass;
    const prisma = new PrismaClient({ adapter: driverAdapter(target) });
    return {
      inTransaction: (orderId, write) =>
        prisma.$transaction(async (tx) => {
          await tx.order.create({ data: { id: orderId } });
          await write(prismaTransaction(tx));
        }, TRANSACTION_OPTIONS),
      // @ts-expect-error a PrismaClient is not a transaction client: refused at compile time
      outsideTransaction: () => prismaTransaction(prisma),
      database: prismaDatabase(prisma, TRANSACTION_OPTIONS),
      async writeEffect(tx, orderId, sku) {
        await prismaOf<TestTransactionClient>(tx).reservation.create({ data: { orderId, sku } });
      },
      close: () => prisma.$disconnect(),
    };
  },
});
