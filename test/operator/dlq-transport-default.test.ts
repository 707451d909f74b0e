/**
 * `evgen dlq` picks the transport the catalog's consumers read from when the flags do not say:
 * a Kafka-only catalog asks for Kafka brokers (not a RabbitMQ URL, even when AMQP_URL is set),
 * a RabbitMQ-only one for a RabbitMQ URL. The refusals come before any connection is opened.
 */
import {
  cpSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { EXIT_BAD_INPUT } from '../../src/cli/exit-codes.js';
import { runCliCaptured } from '../cli/capture-output.js';

const EXAMPLE_EVENTS = fileURLToPath(new URL('../../events/', import.meta.url));
const SAVED = ['AMQP_URL', 'KAFKA_BROKERS'] as const;

/** A copy of the example catalog with one transport block removed from every event. */
function catalogWithout(transport: 'kafka' | 'rabbitmq'): string {
  const dir = mkdtempSync(join(tmpdir(), `evgen-dlq-no-${transport}-`));
  cpSync(EXAMPLE_EVENTS, dir, { recursive: true });
  const visit = (folder: string): void => {
    for (const entry of readdirSync(folder)) {
      const path = join(folder, entry);
      if (statSync(path).isDirectory()) visit(path);
      else if (entry === 'event.json') {
        const event = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
        delete event[transport];
        writeFileSync(path, `${JSON.stringify(event, null, 2)}\n`);
      }
    }
  };
  visit(dir);
  return dir;
}

describe('evgen dlq without --transport', () => {
  const saved = Object.fromEntries(SAVED.map((name) => [name, process.env[name]]));
  const dirs: string[] = [];
  afterEach(() => {
    for (const name of SAVED) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('asks a Kafka-only catalog for Kafka brokers, even with AMQP_URL set', async () => {
    const events = catalogWithout('rabbitmq');
    dirs.push(events);
    process.env.AMQP_URL = 'amqp://guest:guest@127.0.0.1:5672';
    delete process.env.KAFKA_BROKERS;
    const result = await runCliCaptured('dlq', 'list', '--events', events);
    expect(result.code).toBe(EXIT_BAD_INPUT);
    expect(result.stderr).toContain('neither --kafka-brokers nor KAFKA_BROKERS is set');
    expect(result.stderr).not.toContain('amqp');
  });

  it('asks a RabbitMQ-only catalog for a RabbitMQ URL, even with KAFKA_BROKERS set', async () => {
    const events = catalogWithout('kafka');
    dirs.push(events);
    delete process.env.AMQP_URL;
    process.env.KAFKA_BROKERS = '127.0.0.1:9092';
    const result = await runCliCaptured('dlq', 'show', 'x', '--events', events);
    expect(result.code).toBe(EXIT_BAD_INPUT);
    expect(result.stderr).toContain('neither --amqp-url nor AMQP_URL is set');
  });

  it('still lets --transport choose in a catalog on both', async () => {
    delete process.env.AMQP_URL;
    delete process.env.KAFKA_BROKERS;
    const result = await runCliCaptured(
      'dlq',
      'list',
      '--events',
      EXAMPLE_EVENTS,
      '--transport',
      'kafka',
    );
    expect(result.code).toBe(EXIT_BAD_INPUT);
    expect(result.stderr).toContain('neither --kafka-brokers nor KAFKA_BROKERS is set');
  });
});
