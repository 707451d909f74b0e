// `evgen-runtime/kysely`: outbox writes in a Kysely transaction and Kysely in the inbox
// transaction (install kysely to use it).
export { kyselyDatabase, kyselyOf, kyselyTransaction } from './adapters/kysely-adapter.js';
export { OutsideTransactionError } from './errors.js';
