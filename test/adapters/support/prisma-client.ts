/**
 * A Prisma client for the test's two tables, generated the way a service generates its own
 * (`prisma generate`, the `prisma-client` generator: TypeScript, no query-engine binary; queries
 * run through a driver adapter). `prisma generate` never runs the schema engine but insists on
 * finding its binary, which it would download from binaries.prisma.sh (not reachable here):
 * PRISMA_SCHEMA_ENGINE_BINARY points it at a stand-in. The client is written under node_modules
 * (so it resolves @prisma/client) in a folder of its own, removed by `remove()`.
 */
import { execFile } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { uniqueName } from '../../support/postgres.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));

const SCHEMA = `generator client {
  provider = "prisma-client"
  output   = "./client"
}

datasource db {
  provider = "postgresql"
}

model Order {
  id String @id @db.Uuid
  @@map("orders")
}

model Reservation {
  orderId String @map("order_id") @db.Uuid
  sku     String
  @@id([orderId, sku])
  @@map("reservation")
}
`;

export interface GeneratedPrismaClient {
  /** The generated module (`PrismaClient` and the rest), loaded. */
  readonly module: Record<string, unknown>;
  remove(): Promise<void>;
}

export async function generatePrismaClient(): Promise<GeneratedPrismaClient> {
  const folder = join(REPO, 'node_modules', `.${uniqueName('evgen_prisma')}`);
  const remove = () => rm(folder, { recursive: true, force: true });
  try {
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, 'schema.prisma'), SCHEMA);
    await promisify(execFile)(
      join(REPO, 'node_modules/.bin/prisma'),
      ['generate', '--schema', join(folder, 'schema.prisma')],
      {
        cwd: folder,
        env: {
          ...process.env,
          PRISMA_SCHEMA_ENGINE_BINARY: '/bin/true',
          PRISMA_HIDE_UPDATE_MESSAGE: '1',
          CHECKPOINT_DISABLE: '1',
        },
      },
    );
    const module = (await import(pathToFileURL(join(folder, 'client/client.ts')).href)) as Record<
      string,
      unknown
    >;
    return { module, remove };
  } catch (error) {
    await remove();
    throw error;
  }
}
