/**
 * The raw-driver adapters, `pgTransaction(client)` and `mysqlTransaction(connection)`, on the
 * real PostgreSQL and MariaDB: the outbox row commits and rolls back with the business row the
 * service wrote on the same connection, and a connection outside a transaction (no BEGIN, already
 * committed, or a pool) is refused at its first statement.
 */
import mysql from 'mysql2/promise';
import pg from 'pg';
import { mysqlTransaction, pgTransaction } from 'evgen-runtime';
import {
  describeDataLayerAdapter,
  type DataLayerTarget,
  type OpenedDataLayer,
} from './support/data-layer-contract.js';

async function openPg(target: DataLayerTarget): Promise<OpenedDataLayer> {
  const pool = new pg.Pool({ connectionString: target.url, max: 2 });
  // A pool itself does not type-check as a client; a client that never ran BEGIN does.
  const idle = await pool.connect();
  return {
    async inTransaction(orderId, write) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await client.query('INSERT INTO orders (id) VALUES ($1)', [orderId]);
        await write(pgTransaction(client));
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw error;
      } finally {
        client.release();
      }
    },
    outsideTransaction: () => pgTransaction(idle),
    close: async () => {
      idle.release();
      await pool.end();
    },
  };
}

async function openMysql(target: DataLayerTarget): Promise<OpenedDataLayer> {
  const pool = mysql.createPool({ uri: target.url, connectionLimit: 2 });
  return {
    async inTransaction(orderId, write) {
      const connection = await pool.getConnection();
      try {
        await connection.beginTransaction();
        await connection.query('INSERT INTO orders (id) VALUES (?)', [orderId]);
        await write(mysqlTransaction(connection));
        await connection.commit();
      } catch (error) {
        await connection.rollback();
        throw error;
      } finally {
        connection.release();
      }
    },
    outsideTransaction: () => mysqlTransaction(pool),
    close: () => pool.end(),
  };
}

describeDataLayerAdapter('raw driver', {
  inbox: false,
  open: (target) => (target.dialect === 'mariadb' ? openMysql(target) : openPg(target)),
});
