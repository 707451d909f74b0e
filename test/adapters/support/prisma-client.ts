/**
 * A Prisma client for the test's two tables on PostgreSQL or MySQL/MariaDB, generated the way a service generates its own
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

/** The test's two tables in Prisma's schema language, for `provider` (`postgresql` or `mysql`). */
function schemaFor(provider: PrismaProvider): string {
  const id = provider === 'mysql' ? '@db.Char(36)' : '@db.Uuid';
  const sku = provider === 'mysql' ? ' @db.VarChar(64)' : '';
  return `generator client {
  provider = "prisma-client"
  output   = "./client"
}

datasource db {
  provider = "${provider}"
}

model Order {
  id String @id ${id}
  @@map("orders")
}

model Reservation {
  orderId String @map("order_id") ${id}
  sku     String${sku}
  @@id([orderId, sku])
  @@map("reservation")
}
`;
}

export type PrismaProvider = 'postgresql' | 'mysql';

export interface GeneratedPrismaClient {
  /** The generated module (`PrismaClient` and the rest), loaded. */
  readonly module: Record<string, unknown>;
  remove(): Promise<void>;
}

export async function generatePrismaClient(
  provider: PrismaProvider,
): Promise<GeneratedPrismaClient> {
  const folder = join(REPO, 'node_modules', `.${uniqueName('evgen_prisma')}`);
  const remove = () => rm(folder, { recursive: true, force: true });
  try {
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, 'schema.prisma'), schemaFor(provider));
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
