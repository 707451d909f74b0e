// `evgen-runtime/prisma`: outbox writes in a Prisma interactive transaction and Prisma in the
// inbox transaction (needs Prisma's client engine with a driver adapter, e.g. @prisma/adapter-pg).
export {
  prismaDatabase,
  prismaOf,
  prismaTransaction,
  type NotAPrismaClient,
  type PrismaRawClientLike,
  type PrismaTransactionOptions,
} from './adapters/prisma-adapter.js';
export { OutsideTransactionError } from './errors.js';
