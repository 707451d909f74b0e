/**
 * Names the brokers and MySQL reserve are refused with the reason: Kafka topics `.`, `..` and
 * `__…` (its internal topics) and RabbitMQ exchanges `amq.*` when the catalog loads; MySQL's
 * system schemas as the outbox's or inbox's schema when migrating (real MariaDB: nothing is
 * created there).
 */
import { describe, expect, it } from 'vitest';
import { CatalogError } from '../../src/catalog/catalog-error.js';
import { loadCatalog } from '../../src/catalog/load-catalog.js';
import { migrateInbox, migrateOutbox, openDatabase } from '../../src/runtime/index.js';
import { TEST_MARIADB_URL } from '../support/mariadb.js';
import { eventJson, oneEvent, tempCatalog } from './temp-catalog.js';

async function problemsOf(transport: Record<string, unknown>) {
  const catalog = await tempCatalog(
    oneEvent({
      'shop/OrderPlaced/event.json': { ...eventJson('shop', 'OrderPlaced'), ...transport },
    }),
  );
  try {
    await loadCatalog(catalog.events);
    return [];
  } catch (error) {
    if (!(error instanceof CatalogError)) throw error;
    return error.problems.map(
      (problem) => `${problem.pointer} ${problem.code}: ${problem.message}`,
    );
  }
}

describe('reserved broker names in event.json', () => {
  for (const topic of ['.', '..', '__consumer_offsets', '__transaction_state', '__mine']) {
    it(`refuses the Kafka topic ${JSON.stringify(topic)}`, async () => {
      const problems = await problemsOf({ kafka: { topic } });
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(/^\/kafka\/topic reserved-name: .* is reserved by Kafka/);
    });
  }

  for (const exchange of ['amq.topic', 'amq.default', 'AMQ.direct']) {
    it(`refuses the RabbitMQ exchange ${JSON.stringify(exchange)}`, async () => {
      const problems = await problemsOf({
        rabbitmq: { exchange, routingKey: 'shop.OrderPlaced' },
      });
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(
        /^\/rabbitmq\/exchange reserved-name: .* is reserved by RabbitMQ/,
      );
    });
  }

  it('accepts ordinary names that merely contain the reserved parts', async () => {
    expect(
      await problemsOf({
        kafka: { topic: 'shop._events' },
        rabbitmq: { exchange: 'shop.amq', routingKey: 'shop.OrderPlaced' },
      }),
    ).toEqual([]);
  });
});

describe('MySQL system schemas for the outbox and inbox', () => {
  it('are refused at migration on MariaDB, and nothing is created there', async () => {
    const db = await openDatabase(TEST_MARIADB_URL);
    try {
      for (const schema of ['mysql', 'information_schema', 'performance_schema', 'sys', 'MySQL']) {
        await expect(migrateOutbox(db, { schema })).rejects.toThrow(
          /is a MySQL\/MariaDB system schema/,
        );
        await expect(migrateInbox(db, { schema })).rejects.toThrow(
          /is a MySQL\/MariaDB system schema/,
        );
      }
      const created = await db.query<{ n: number }>(
        "SELECT COUNT(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'mysql' AND TABLE_NAME LIKE '%outbox%'",
      );
      expect(Number(created.rows[0]!.n)).toBe(0);
    } finally {
      await db.close();
    }
  });
});
