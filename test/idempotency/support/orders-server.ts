/**
 * The orders service of the HTTP tests in its own process, so a test can SIGKILL it at a chosen
 * point of a request and start it again on the same database.
 * Usage: orders-server.ts <express|fastify> <database-url> <schema> <lease-ms> <crash>
 * crash: `before-commit` (prints `crash-point before-commit <messageId>` inside the request's
 * transaction, after the order and its event were written, then waits to be killed),
 * `after-commit` (prints `crash-point after-commit <body JSON>` once the transaction committed,
 * before the response is sent, then waits), or `none`. Prints `listening <url>` when ready and
 * `executing` each time the business handler starts.
 */
import { childDatabase } from '../../outage/support/child-database.js';
import { startOrdersApp, type Framework } from './orders-app.js';

const [framework, databaseUrl, schema, leaseMs, crash] = process.argv.slice(2) as [
  Framework,
  string,
  string,
  string,
  'before-commit' | 'after-commit' | 'none',
];
const forever = new Promise<never>(() => undefined);
const db = childDatabase(databaseUrl, 4);
const app = await startOrdersApp(framework, {
  db,
  schema,
  idempotency: { leaseMs: Number(leaseMs) },
  onExecute: () => process.stdout.write('executing\n'),
  ...(crash === 'before-commit'
    ? {
        beforeCommit: ({ messageId }) => {
          process.stdout.write(`crash-point before-commit ${messageId}\n`);
          return forever;
        },
      }
    : {}),
  ...(crash === 'after-commit'
    ? {
        beforeRespond: (body) => {
          process.stdout.write(`crash-point after-commit ${body}\n`);
          return forever;
        },
      }
    : {}),
});
process.stdout.write(`listening ${app.url}\n`);
