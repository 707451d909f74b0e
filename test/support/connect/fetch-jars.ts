/**
 * Fetches the Kafka Connect worker jars and the Debezium plugins (PostgreSQL, MariaDB) from Maven Central into their
 * cache (a no-op once there), so the CDC tests do not spend their start-up time downloading:
 * `npx tsx test/support/connect/fetch-jars.ts`.
 */
import { connectCacheDir, ensureConnectJars } from './connect-jars.js';

const jars = ensureConnectJars();
process.stdout.write(
  `kafka connect jars ready in ${connectCacheDir()} (plugins ${jars.plugins})\n`,
);
