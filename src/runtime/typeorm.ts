// `evgen-runtime/typeorm`: outbox writes in a TypeORM transaction and TypeORM in the inbox
// transaction (install typeorm to use it).
export { typeormDatabase, typeormOf, typeormTransaction } from './adapters/typeorm-adapter.js';
export { OutsideTransactionError } from './errors.js';
