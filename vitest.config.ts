import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (path: string) => fileURLToPath(new URL(`./src/${path}`, import.meta.url));

export default defineConfig({
  resolve: {
    // Tests run against the sources, never against a stale dist/ build.
    alias: [
      { find: /^evgen\/runtime$/, replacement: src('runtime/index.ts') },
      { find: /^evgen-runtime$/, replacement: src('runtime/index.ts') },
      { find: /^evgen-runtime\/kafkajs$/, replacement: src('runtime/kafkajs.ts') },
      {
        find: /^evgen-runtime\/platformatic-kafka$/,
        replacement: src('runtime/platformatic-kafka.ts'),
      },
      { find: /^evgen-runtime\/kysely$/, replacement: src('runtime/kysely.ts') },
      { find: /^evgen-runtime\/knex$/, replacement: src('runtime/knex.ts') },
      { find: /^evgen-runtime\/drizzle$/, replacement: src('runtime/drizzle.ts') },
      { find: /^evgen-runtime\/typeorm$/, replacement: src('runtime/typeorm.ts') },
      { find: /^evgen-runtime\/prisma$/, replacement: src('runtime/prisma.ts') },
      { find: /^evgen$/, replacement: src('index.ts') },
    ],
  },
  test: {
    reporters: ['default', './test/support/summary-reporter.ts'],
    // Starts the shared Kafka broker (test/support/kafka/) and the schema registry
    // (test/support/registry/) when they do not answer; the Pulsar broker (test/support/pulsar/)
    // only for runs that include a test using it, stopped again when the last such run ends.
    globalSetup: [
      './test/support/kafka/global-setup.ts',
      './test/support/registry/global-setup.ts',
      './test/support/pulsar/global-setup.ts',
    ],
    include: ['test/**/*.test.ts'],
    exclude: ['**/node_modules/**', 'test/golden/*/expected/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Database and broker tests each own their schema/queues, but two cores are all we have.
    maxWorkers: 2,
  },
});
