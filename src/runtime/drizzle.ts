// `evgen-runtime/drizzle`: outbox writes in a Drizzle transaction and Drizzle in the inbox
// transaction (install drizzle-orm to use it).
export {
  drizzleDatabase,
  drizzleOf,
  drizzleTransaction,
  type DrizzleTransactionOf,
} from './adapters/drizzle-adapter.js';
export { OutsideTransactionError } from './errors.js';
