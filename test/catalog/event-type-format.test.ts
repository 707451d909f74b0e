import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { eventTypeFormatProblem, formatEventType } from '../../src/catalog/event-type-format.js';
import { loadCatalog } from '../../src/catalog/load-catalog.js';
import { loadConfig } from '../../src/cli/config.js';
import { CatalogError } from '../../src/catalog/catalog-error.js';
import { oneEvent, tempCatalog, type TempCatalog } from './temp-catalog.js';

describe('event type naming template', () => {
  it('builds the event type from the domain and event name', () => {
    expect(formatEventType('{domain}.{EventName}', 'order', 'OrderCreated')).toBe(
      'order.OrderCreated',
    );
    expect(formatEventType('{domain}.{event-name}', 'order', 'OrderCreated')).toBe(
      'order.order-created',
    );
    expect(formatEventType('{domain}.{event_name}', 'order', 'OrderCreated')).toBe(
      'order.order_created',
    );
    expect(formatEventType('acme.{domain}.{eventName}.v1', 'order', 'OrderCreated')).toBe(
      'acme.order.orderCreated.v1',
    );
  });

  it('refuses templates that could merge two events into one type or give an invalid type', () => {
    expect(eventTypeFormatProblem('{domain}.{EventName}')).toBeUndefined();
    expect(eventTypeFormatProblem('{EventName}')).toMatch(/must contain \{domain\}/);
    expect(eventTypeFormatProblem('{domain}.events')).toMatch(/must contain one of/);
    expect(eventTypeFormatProblem('{domain}.{Name}')).toMatch(/unknown placeholder \{Name\}/);
    expect(eventTypeFormatProblem('{domain}/{EventName}')).toMatch(/only letters/);
    expect(eventTypeFormatProblem('.{domain}.{EventName}')).toMatch(/dot-separated/);
  });
});

describe('naming.eventType in the config', () => {
  let catalog: TempCatalog | undefined;
  afterEach(async () => {
    await catalog?.cleanup();
    catalog = undefined;
  });

  it('sets the default event type of events that do not declare one', async () => {
    catalog = await tempCatalog(oneEvent());
    const configFile = join(catalog.dir, 'evgen.config.json');
    await writeFile(
      configFile,
      JSON.stringify({ naming: { eventType: '{domain}.{event-name}' }, handlers: 'src/handlers' }),
    );
    const config = await loadConfig({ config: configFile });
    expect(config.eventTypeFormat).toBe('{domain}.{event-name}');
    expect(config.handlers).toBe(join(catalog.dir, 'src/handlers'));
    const loaded = await loadCatalog(config.events, { eventTypeFormat: config.eventTypeFormat });
    expect(loaded.events.map((event) => event.eventType)).toEqual(['shop.order-placed']);
    // Without the option the documented default applies.
    expect((await loadCatalog(config.events)).events.map((event) => event.eventType)).toEqual([
      'shop.OrderPlaced',
    ]);
  });

  it('reports an unusable template at its JSON pointer', async () => {
    catalog = await tempCatalog(oneEvent());
    const configFile = join(catalog.dir, 'evgen.config.json');
    await writeFile(configFile, JSON.stringify({ naming: { eventType: '{EventName}' } }));
    const error = await loadConfig({ config: configFile }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CatalogError);
    expect((error as CatalogError).problems).toMatchObject([
      { code: 'invalid-config', pointer: '/naming/eventType' },
    ]);
  });
});
