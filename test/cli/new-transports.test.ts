/**
 * `evgen new` writes the transport blocks the catalog uses: both in a mixed catalog, only
 * `kafka` in a Kafka-only one (no `rabbitmq` block to delete by hand), whatever `--transports`
 * says when given, and refuses an unknown transport.
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCatalog } from '../../src/catalog/load-catalog.js';
import { runCli } from '../../src/cli/main.js';
import { EXIT_BAD_INPUT, EXIT_OK } from '../../src/cli/exit-codes.js';
import { eventJson, payloadSchema, writeFiles } from '../catalog/temp-catalog.js';
import { useCliFixture } from './cli-fixture.js';

const cli = useCliFixture();

async function scaffolded(name: string): Promise<Record<string, unknown>> {
  return JSON.parse(
    await readFile(join(cli.catalog.events, 'loyalty', name, 'event.json'), 'utf8'),
  ) as Record<string, unknown>;
}

describe('evgen new: transport blocks', () => {
  it('writes both blocks in a catalog whose events use both', async () => {
    expect(await runCli(['new', 'loyalty/PointsAwarded', '--events', cli.catalog.events])).toBe(
      EXIT_OK,
    );
    expect(Object.keys(await scaffolded('PointsAwarded'))).toEqual(
      expect.arrayContaining(['kafka', 'rabbitmq']),
    );
  });

  it('writes only kafka in a Kafka-only catalog, and the result loads', async () => {
    await rm(join(cli.catalog.events, 'shop'), { recursive: true, force: true });
    const { rabbitmq: _, ...kafkaOnly } = eventJson('shop', 'OrderPlaced');
    await writeFiles(cli.catalog.events, {
      'shop/OrderPlaced/event.json': kafkaOnly,
      'shop/OrderPlaced/v1.schema.json': payloadSchema(),
    });
    expect(await runCli(['new', 'loyalty/PointsAwarded', '--events', cli.catalog.events])).toBe(
      EXIT_OK,
    );
    const meta = await scaffolded('PointsAwarded');
    expect(meta.kafka).toEqual({ topic: 'loyalty.events' });
    expect(meta).not.toHaveProperty('rabbitmq');
    const loaded = await loadCatalog(cli.catalog.events);
    expect(loaded.events.find((e) => e.name === 'PointsAwarded')!.rabbitmq).toBeUndefined();
  });

  it('follows --transports, and refuses an unknown one writing nothing', async () => {
    expect(
      await runCli([
        'new',
        'loyalty/PointsRedeemed',
        '--transports',
        'rabbitmq',
        '--events',
        cli.catalog.events,
      ]),
    ).toBe(EXIT_OK);
    const meta = await scaffolded('PointsRedeemed');
    expect(meta.rabbitmq).toEqual({ exchange: 'loyalty', routingKey: 'loyalty.points-redeemed' });
    expect(meta).not.toHaveProperty('kafka');
    expect(
      await runCli([
        'new',
        'loyalty/PointsExpired',
        '--transports',
        'kafka,sqs',
        '--events',
        cli.catalog.events,
      ]),
    ).toBe(EXIT_BAD_INPUT);
    expect(cli.output.stderr()).toContain(
      '--transports: bad-option: "kafka,sqs" is not a list of transports',
    );
    await expect(scaffolded('PointsExpired')).rejects.toThrow(/ENOENT/);
  });
});
