import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCatalog } from '../../src/catalog/load-catalog.js';
import { runCli } from '../../src/cli/main.js';
import { eventJson, writeFiles } from '../catalog/temp-catalog.js';
import { useCliFixture } from './cli-fixture.js';

const cli = useCliFixture();

describe('evgen new', () => {
  it('scaffolds event.json and v1.schema.json that load as a valid event', async () => {
    expect(await runCli(['new', 'payment/PaymentCaptured', '--events', cli.catalog.events])).toBe(
      0,
    );
    const loaded = await loadCatalog(cli.catalog.events);
    const event = loaded.events.find((candidate) => candidate.name === 'PaymentCaptured')!;
    expect(event).toMatchObject({
      eventType: 'payment.PaymentCaptured',
      aggregate: 'Payment',
      aggregateId: 'paymentId',
    });
    expect(event.versions.map((version) => version.version)).toEqual([1]);
    expect(cli.output.stdout()).toContain('payment/PaymentCaptured/event.json');
  });

  it('takes the aggregate from the event name (all words but the last), not from the domain', async () => {
    expect(await runCli(['new', 'billing/InvoiceIssued', '--events', cli.catalog.events])).toBe(0);
    expect(await runCli(['new', 'billing/LineItemAdded', '--events', cli.catalog.events])).toBe(0);
    expect(await runCli(['new', 'billing/Reconciled', '--events', cli.catalog.events])).toBe(0);
    const loaded = await loadCatalog(cli.catalog.events);
    const byName = (name: string) => loaded.events.find((event) => event.name === name)!;
    expect(byName('InvoiceIssued')).toMatchObject({
      aggregate: 'Invoice',
      aggregateId: 'invoiceId',
    });
    expect(byName('LineItemAdded')).toMatchObject({
      aggregate: 'LineItem',
      aggregateId: 'lineItemId',
    });
    // One word says nothing about the aggregate: the domain it is.
    expect(byName('Reconciled')).toMatchObject({ aggregate: 'Billing', aggregateId: 'billingId' });
    const schema = JSON.parse(
      await readFile(join(cli.catalog.events, 'billing/InvoiceIssued/v1.schema.json'), 'utf8'),
    ) as { required: string[]; properties: Record<string, unknown> };
    expect(schema.required).toEqual(['invoiceId']);
    expect(Object.keys(schema.properties)).toEqual(['invoiceId']);
    expect(cli.output.stdout()).toContain('aggregate Invoice, id invoiceId');
  });

  it('takes --aggregate and --id over the name', async () => {
    expect(
      await runCli([
        'new',
        'billing/PaymentReminderSent',
        '--aggregate',
        'Invoice',
        '--id',
        'invoiceNumber',
        '--events',
        cli.catalog.events,
      ]),
    ).toBe(0);
    expect(
      await runCli([
        'new',
        'billing/DunningStarted',
        '--aggregate',
        'Account',
        '--events',
        cli.catalog.events,
      ]),
    ).toBe(0);
    const loaded = await loadCatalog(cli.catalog.events);
    const byName = (name: string) => loaded.events.find((event) => event.name === name)!;
    expect(byName('PaymentReminderSent')).toMatchObject({
      aggregate: 'Invoice',
      aggregateId: 'invoiceNumber',
    });
    expect(byName('DunningStarted')).toMatchObject({
      aggregate: 'Account',
      aggregateId: 'accountId',
    });
  });

  it('refuses an --aggregate or --id the catalog would reject, writing nothing (exit 2)', async () => {
    const events = cli.catalog.events;
    expect(
      await runCli(['new', 'billing/InvoiceIssued', '--aggregate', 'invoice', '--events', events]),
    ).toBe(2);
    expect(
      await runCli(['new', 'billing/InvoiceIssued', '--id', 'invoice-id', '--events', events]),
    ).toBe(2);
    expect(cli.output.stderr()).toContain(
      '--aggregate: bad-option: "invoice" is not a PascalCase aggregate name',
    );
    expect(cli.output.stderr()).toContain('--id: bad-option: "invoice-id" is not a property name');
    expect(cli.output.stderr()).toContain('hint: ');
    await expect(
      readFile(join(events, 'billing/InvoiceIssued/event.json'), 'utf8'),
    ).rejects.toThrow();
  });

  it('refuses to overwrite an existing event and changes nothing', async () => {
    const path = join(cli.catalog.events, 'shop/OrderPlaced/event.json');
    const before = await readFile(path, 'utf8');
    expect(await runCli(['new', 'shop/OrderPlaced', '--events', cli.catalog.events])).toBe(2);
    expect(cli.output.stderr()).toContain('already exists; not overwritten');
    expect(await readFile(path, 'utf8')).toBe(before);
  });

  it('refuses names that are not safe identifiers', async () => {
    expect(await runCli(['new', 'shop/order-placed', '--events', cli.catalog.events])).toBe(2);
    expect(await runCli(['new', 'shop/Promise', '--events', cli.catalog.events])).toBe(2);
    expect(await runCli(['new', 'OrderPlaced', '--events', cli.catalog.events])).toBe(2);
    expect(cli.output.stderr()).toContain('is not PascalCase');
    expect(cli.output.stderr()).toContain('"Promise" is a JavaScript/TypeScript global');
    expect(cli.output.stderr()).toContain('expected <domain>/<EventName>');
  });

  it('says what to do when the event already exists', async () => {
    expect(await runCli(['new', 'shop/OrderPlaced', '--events', cli.catalog.events])).toBe(2);
    expect(cli.output.stderr()).toMatch(
      /shop\/OrderPlaced\/event\.json: .*already exists[^\n]*\n {2}hint: .*evgen version shop\/OrderPlaced/,
    );
  });

  it('refuses an event whose generated names would clash with an existing one, writing nothing', async () => {
    // Same event name in another domain: both would generate OrderPlacedPayload, and the build would refuse.
    expect(await runCli(['new', 'billing/OrderPlaced', '--events', cli.catalog.events])).toBe(2);
    expect(cli.output.stderr()).toContain('shop/OrderPlaced/event.json');
    expect(cli.output.stderr()).toContain('OrderPlacedPayload');
    expect(cli.output.stderr()).toContain('hint: ');
    await expect(
      readFile(join(cli.catalog.events, 'billing/OrderPlaced/event.json'), 'utf8'),
    ).rejects.toThrow();
    // An event named like another's version type (OrderPlacedV1Payload) clashes too.
    expect(await runCli(['new', 'shop/OrderPlacedV1', '--events', cli.catalog.events])).toBe(2);
    expect(cli.output.stderr()).toContain('OrderPlacedV1Payload');
  });

  it('scaffolds an event that builds and type-checks next to the existing ones', async () => {
    expect(await runCli(['new', 'billing/InvoiceSent', '--events', cli.catalog.events])).toBe(0);
    const out = join(cli.catalog.dir, 'generated');
    expect(await runCli(['build', '--events', cli.catalog.events, '--out', out])).toBe(0);
    expect(await readFile(join(out, 'billing/invoice-sent/envelope.ts'), 'utf8')).toContain(
      'export function invoiceSentV1(',
    );
  });
});

describe('evgen version', () => {
  it('copies the latest schema to the next version', async () => {
    const dir = join(cli.catalog.events, 'shop/OrderPlaced');
    expect(await runCli(['version', 'shop/OrderPlaced', '--events', cli.catalog.events])).toBe(0);
    expect(await readFile(join(dir, 'v2.schema.json'), 'utf8')).toBe(
      await readFile(join(dir, 'v1.schema.json'), 'utf8'),
    );
    await writeFile(
      join(dir, 'v2.schema.json'),
      '{"type":"object","properties":{"orderId":{"type":"string"}},"required":["orderId"]}',
    );
    expect(await runCli(['version', 'shop/OrderPlaced', '--events', cli.catalog.events])).toBe(0);
    expect(await readFile(join(dir, 'v3.schema.json'), 'utf8')).toBe(
      await readFile(join(dir, 'v2.schema.json'), 'utf8'),
    );
    const loaded = await loadCatalog(cli.catalog.events);
    expect(loaded.events[0]!.versions.map((version) => version.version)).toEqual([1, 2, 3]);
  });

  it('refuses to run over a version gap and writes nothing', async () => {
    const dir = join(cli.catalog.events, 'shop/OrderPlaced');
    await writeFile(
      join(dir, 'v3.schema.json'),
      await readFile(join(dir, 'v1.schema.json'), 'utf8'),
    );
    expect(await runCli(['version', 'shop/OrderPlaced', '--events', cli.catalog.events])).toBe(2);
    expect(cli.output.stderr()).toMatch(
      /shop\/OrderPlaced: .*missing v2\.schema\.json\n {2}hint: /,
    );
    await expect(readFile(join(dir, 'v4.schema.json'), 'utf8')).rejects.toThrow();
  });

  it('says what to do when the event has no schema yet', async () => {
    await writeFiles(cli.catalog.events, { 'shop/Empty/event.json': eventJson('shop', 'Empty') });
    expect(await runCli(['version', 'shop/Empty', '--events', cli.catalog.events])).toBe(2);
    expect(cli.output.stderr()).toMatch(/shop\/Empty: .*no v1\.schema\.json\n {2}hint: /);
  });

  it('fails with exit 2 for an unknown event', async () => {
    expect(await runCli(['version', 'shop/Nope', '--events', cli.catalog.events])).toBe(2);
    expect(cli.output.stderr()).toContain('does not exist');
    expect(cli.output.stderr()).toContain('hint: create it with `evgen new shop/Nope`');
  });
});

describe('runCli', () => {
  it('maps usage errors to exit 2 and does not leak exit codes between runs', async () => {
    expect(await runCli(['build', '--no-such-flag'])).toBe(2);
    expect(await runCli(['version', 'shop/Nope', '--events', cli.catalog.events])).toBe(2);
    expect(await runCli(['version', 'shop/OrderPlaced', '--events', cli.catalog.events])).toBe(0);
  });

  it('exits 2 for an unknown option, a missing or extra argument, or an unknown command, in every command', async () => {
    for (const command of ['build', 'check', 'diff', 'new', 'scaffold', 'version']) {
      expect(await runCli([command, '--no-such-flag']), command).toBe(2);
    }
    for (const argv of [
      ['new'],
      ['version'],
      ['diff', 'a.json'],
      ['new', 'shop/A', 'extra'],
      ['build', 'extra'],
      ['teleport'],
      [],
    ]) {
      expect(await runCli(argv), argv.join(' ')).toBe(2);
    }
    expect(await runCli(['--help'])).toBe(0);
    expect(await runCli(['help', 'build'])).toBe(0);
  });

  it('prints the tool version for --version and -V with exit 0', async () => {
    const { version } = JSON.parse(
      await readFile(new URL('../../package.json', import.meta.url), 'utf8'),
    ) as { version: string };
    expect(await runCli(['--version'])).toBe(0);
    expect(await runCli(['-V'])).toBe(0);
    expect(cli.output.stdout()).toBe(`${version}\n${version}\n`);
  });
});
