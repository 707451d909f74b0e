// Inbox-guarded consumers: tables, the guard, ordering helpers and the consumer runtime.
export * from './inbox-tables.js';
export * from './migrate-inbox.js';
export * from './prune-inbox.js';
export * from './find-inbox-entries.js';
export {
  handleWithInbox,
  type InboxOutcome,
  type InboxGuardOptions,
  type InboxHandler,
} from './inbox-guard.js';
export * from './inbox-handler-error.js';
export * from './inbox-batch.js';
export * from './aggregate-order.js';
export * from './consumer.js';
