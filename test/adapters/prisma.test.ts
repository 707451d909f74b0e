/**
 * `evgen-runtime/prisma` on the real PostgreSQL, with Prisma's client engine and
 * `@prisma/adapter-pg` (no engine binary): the shared data-layer contract, plus the
 * compile-time refusal of a full PrismaClient.
 */
import { PrismaPg } from '@prisma/adapter-pg';
import { afterAll, beforeAll } from 'vitest';
import {
  prismaDatabase,
  prismaOf,
  prismaTransaction,
  type PrismaRawClientLike,
} from 'evgen-runtime/prisma';
import { describeDataLayerAdapter } from './support/data-layer-contract.js';
import { generatePrismaClient, type GeneratedPrismaClient } from './support/prisma-client.js';

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
type PrismaClientClass = new (options: { adapter: PrismaPg }) => TestPrismaClient;

// Interactive transactions time out after 5 s by default; the machine is shared and loaded.
const TRANSACTION_OPTIONS = { timeout: 30_000, maxWait: 30_000 };

let generated: GeneratedPrismaClient;
beforeAll(async () => {
  generated = await generatePrismaClient();
}, 120_000);
afterAll(async () => {
  await generated?.remove();
});

describeDataLayerAdapter(
  'Prisma',
  {
    async open(target) {
      const PrismaClient = generated.module.PrismaClient as PrismaClientClass;
      const prisma = new PrismaClient({
        adapter: new PrismaPg({ connectionString: target.url, max: 4 }, { schema: target.schema }),
      });
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
  },
  ['postgres'],
); // MySQL/MariaDB through Prisma (@prisma/adapter-mariadb) is not covered
