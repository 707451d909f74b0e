// `evgen-runtime/knex`: outbox writes in a Knex transaction and Knex in the inbox transaction
// (install knex to use it).
export { knexDatabase, knexOf, knexTransaction } from './adapters/knex-adapter.js';
export { OutsideTransactionError } from './errors.js';
