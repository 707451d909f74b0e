/**
 * In-process envelope costs against raw ajv measured in the same run, on the generated
 * order.OrderCreated v2 (15 properties, nested objects, an array, enums, formats, patterns):
 * - constructor: the generated `orderCreatedV2(payload)` (strict writer validation, aggregate id,
 *   UUIDv7 message id, timestamp) vs ajv compiling the same writer-view schema with the same
 *   options, validating, and building the envelope as an object literal (`randomUUID`, ISO time);
 * - parseEnvelope: the generated `parseEnvelope(json)` (envelope fields, reader validation,
 *   aggregate id check) vs `JSON.parse` + the same reader-view schema compiled by ajv; once from
 *   JSON text, once from the Buffer a broker delivers (body limits and strict UTF-8 included;
 *   the baseline decodes it with `toString()`).
 * - pattern engine: the generated validators' ajv options (patterns on RE2, linear-pattern.ts)
 *   against the same options with JavaScript's RegExp, the writer and the reader view each: the
 *   validator cost of linear-time pattern matching, before and after, in the same run.
 * - Confluent's wire format (a catalog's `wireFormat: confluent`): the producer's record value,
 *   framed (envelope → JSON → bytes with magic byte and a cached schema id, as the Kafka
 *   publishers do) vs plain (envelope → JSON → bytes, what the client does with a plain value);
 *   the consumer's side, reading the frame and parsing the envelope vs parsing the plain value.
 * - Kafka record with stored headers: the record the relay builds for a row whose writer stored
 *   its trace context (traceparent, tracestate) vs the same row without (evgen's headers after
 *   the stored ones: a spread of both once cost ~15 µs a record on V8's slow path).
 * Subject and baseline alternate within each sample; ≥ 3 samples, medians with spread; CPU time.
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import AjvModule from 'ajv';
import addFormatsModule from 'ajv-formats';
import { loadCatalog } from '../../src/catalog/load-catalog.js';
import { readerSchema, writerSchema } from '../../src/schema/views.js';
import { newAjv } from '../../src/codegen/targets/validators.js';
import { orderCreatedV2, parseEnvelope } from '../../generated/index.js';
import { frameConfluent, readConfluentFrame } from '../../src/runtime/kafka/confluent-framing.js';
import { envelopeToKafkaRecord } from '../../src/runtime/kafka/kafka-record.js';
import type { OrderCreatedV2Payload } from '../../generated/order/order-created/types.js';
import { SAMPLES, SMOKE, fromSamples, type BenchResult } from './bench-result.js';

const Ajv = AjvModule.default;
const addFormats = addFormatsModule.default;
const ITERATIONS = SMOKE ? 2_000 : 50_000;
const ROUNDS = 5;

function payload(i: number): OrderCreatedV2Payload {
  return {
    orderId: randomUUID(),
    customerId: randomUUID(),
    placedAt: '2026-01-02T03:04:05Z',
    channel: 'web',
    lines: [
      { sku: `SKU-${i % 100}`, quantity: 2, unitPrice: { amountMinor: 500, currency: 'EUR' } },
    ],
    total: { amountMinor: 1000, currency: 'EUR' },
    shippingAddress: { line1: 'Main St 1', city: 'Berlin', postalCode: '10115', country: 'DE' },
  };
}

/**
 * Operations per second of `work(i)` over `count` calls, in CPU time of this process (user +
 * system): on a shared machine wall time also counts the slices the scheduler gives to other
 * processes, which swung single samples by 2× here; CPU time counts the work.
 */
function rate(count: number, work: (i: number) => unknown): number {
  const start = process.cpuUsage();
  let sink = 0;
  for (let i = 0; i < count; i++) if (work(i) !== undefined) sink++;
  const used = process.cpuUsage(start);
  if (sink !== count) throw new Error('a benchmarked call returned nothing');
  return count / ((used.user + used.system) / 1e6);
}

/** Samples of both sides, alternating in rounds so machine-load drift hits both alike. */
function compare(
  subject: (i: number) => unknown,
  baseline: (i: number) => unknown,
): { subject: number[]; baseline: number[] } {
  rate(ITERATIONS / 5, subject);
  rate(ITERATIONS / 5, baseline);
  const samples = { subject: [] as number[], baseline: [] as number[] };
  for (let sample = 0; sample < SAMPLES; sample++) {
    let subjectSeconds = 0;
    let baselineSeconds = 0;
    const perRound = ITERATIONS / ROUNDS;
    for (let round = 0; round < ROUNDS; round++) {
      baselineSeconds += perRound / rate(perRound, baseline);
      subjectSeconds += perRound / rate(perRound, subject);
    }
    samples.subject.push(ITERATIONS / subjectSeconds);
    samples.baseline.push(ITERATIONS / baselineSeconds);
  }
  return samples;
}

export async function run(): Promise<BenchResult[]> {
  const catalog = await loadCatalog(fileURLToPath(new URL('../../events', import.meta.url)));
  const event = catalog.events.find((e) => e.eventType === 'order.OrderCreated')!;
  const bundled = event.versions.find((v) => v.version === 2)!.bundled;
  // The options the generated standalone validators are compiled with.
  const ajv = new Ajv({ allErrors: true, strict: false, strictNumbers: true, ownProperties: true });
  addFormats(ajv);
  const validateWriter = ajv.compile(writerSchema(bundled));
  const validateReader = ajv.compile(readerSchema(bundled));

  const payloads = Array.from({ length: 1_000 }, (_, i) => payload(i));
  const constructed = compare(
    (i) => orderCreatedV2(payloads[i % payloads.length]!),
    (i) => {
      const p = payloads[i % payloads.length]!;
      if (!validateWriter(p)) throw new Error('invalid payload');
      return {
        messageId: randomUUID(),
        eventType: 'order.OrderCreated',
        schemaVersion: 2,
        aggregateType: 'Order',
        aggregateId: p.orderId,
        occurredAt: new Date().toISOString(),
        payload: p,
      };
    },
  );

  const texts = payloads.map((p) => JSON.stringify(orderCreatedV2(p)));
  const parsed = compare(
    (i) => {
      const result = parseEnvelope(texts[i % texts.length]!);
      if (!result.ok) throw result.error;
      return result.envelope;
    },
    (i) => {
      const value = JSON.parse(texts[i % texts.length]!) as { payload: unknown };
      if (!validateReader(value.payload)) throw new Error('invalid payload');
      return value;
    },
  );

  const bodies = texts.map((text) => Buffer.from(text));
  const parsedBuffers = compare(
    (i) => {
      const result = parseEnvelope(bodies[i % bodies.length]!);
      if (!result.ok) throw result.error;
      return result.envelope;
    },
    (i) => {
      const value = JSON.parse(bodies[i % bodies.length]!.toString()) as { payload: unknown };
      if (!validateReader(value.payload)) throw new Error('invalid payload');
      return value;
    },
  );

  // Framing with an id already resolved: the publishers ask the registry once per event version.
  const SCHEMA_ID = 100_042;
  const envelopes = payloads.map((p) => orderCreatedV2(p));
  const valueBytes = (i: number) =>
    Buffer.from(
      envelopeToKafkaRecord(envelopes[i % envelopes.length]!, 'order.events').value as string,
      'utf8',
    );
  const framing = compare(
    (i) => frameConfluent(SCHEMA_ID, valueBytes(i)),
    (i) => valueBytes(i),
  );
  // A writer with OpenTelemetry stores its trace context with the row; the relay sends it on.
  const traceContext = envelopes.map((_, i) => ({
    traceparent: `00-${randomUUID().replaceAll('-', '')}-${String(i).padStart(16, '0')}-01`,
    tracestate: 'vendor=opaque',
  }));
  const withStoredHeaders = compare(
    (i) =>
      envelopeToKafkaRecord(
        envelopes[i % envelopes.length]!,
        'order.events',
        traceContext[i % traceContext.length],
      ),
    (i) => envelopeToKafkaRecord(envelopes[i % envelopes.length]!, 'order.events'),
  );
  const framedBodies = bodies.map((body) => frameConfluent(SCHEMA_ID, body));
  const unframing = compare(
    (i) => {
      const frame = readConfluentFrame(framedBodies[i % framedBodies.length]!);
      if (frame?.schemaId !== SCHEMA_ID) throw new Error('not framed');
      const result = parseEnvelope(frame.data);
      if (!result.ok) throw result.error;
      return result.envelope;
    },
    (i) => {
      const body = bodies[i % bodies.length]!;
      if (readConfluentFrame(body) !== undefined) throw new Error('framed');
      const result = parseEnvelope(body);
      if (!result.ok) throw result.error;
      return result.envelope;
    },
  );

  // The generated validators' options, once as generated (RE2) and once with JavaScript's RegExp.
  const withEngine = (linear: boolean) => {
    const instance = newAjv('draft-07', linear ? {} : { code: { lines: true } });
    addFormats(instance);
    return {
      writer: instance.compile(writerSchema(bundled)),
      reader: instance.compile(readerSchema(bundled)),
    };
  };
  const linear = withEngine(true);
  const backtracking = withEngine(false);
  const checked = (valid: boolean) => {
    if (!valid) throw new Error('invalid payload');
    return valid;
  };
  const readerPayloads = texts.map((text) => (JSON.parse(text) as { payload: unknown }).payload);
  const writerEngines = compare(
    (i) => checked(linear.writer(payloads[i % payloads.length]!)),
    (i) => checked(backtracking.writer(payloads[i % payloads.length]!)),
  );
  const readerEngines = compare(
    (i) => checked(linear.reader(readerPayloads[i % readerPayloads.length]!)),
    (i) => checked(backtracking.reader(readerPayloads[i % readerPayloads.length]!)),
  );

  return [
    fromSamples(
      {
        name: 'writer validation, OrderCreated v2: patterns on RE2 (as generated)',
        unit: 'ops/s',
        baselineName: 'same ajv options, patterns on JavaScript RegExp',
        goal: { ratio: 0.8, better: 'higher' },
      },
      writerEngines.subject,
      writerEngines.baseline,
    ),
    fromSamples(
      {
        name: 'reader validation, OrderCreated v2: patterns on RE2 (as generated)',
        unit: 'ops/s',
        baselineName: 'same ajv options, patterns on JavaScript RegExp',
        goal: { ratio: 0.8, better: 'higher' },
      },
      readerEngines.subject,
      readerEngines.baseline,
    ),
    fromSamples(
      {
        name: 'envelope constructor, OrderCreated v2 (strict validate)',
        unit: 'ops/s',
        baselineName: 'raw ajv (same schema and options) + object literal',
        goal: { ratio: 0.8, better: 'higher' },
      },
      constructed.subject,
      constructed.baseline,
    ),
    fromSamples(
      {
        name: 'parseEnvelope, OrderCreated v2 JSON text (tolerant reader)',
        unit: 'ops/s',
        baselineName: 'JSON.parse + raw ajv of the reader schema',
        goal: { ratio: 0.9, better: 'higher' },
      },
      parsed.subject,
      parsed.baseline,
    ),
    fromSamples(
      {
        name: 'parseEnvelope, OrderCreated v2 broker Buffer (tolerant reader)',
        unit: 'ops/s',
        baselineName: 'JSON.parse(buffer.toString()) + raw ajv of the reader schema',
        goal: { ratio: 0.9, better: 'higher' },
      },
      parsedBuffers.subject,
      parsedBuffers.baseline,
    ),
    fromSamples(
      {
        name: 'Kafka record value, OrderCreated v2, Confluent wire format (framed, cached id)',
        unit: 'ops/s',
        baselineName: 'the same value as plain JSON bytes',
        goal: { ratio: 0.8, better: 'higher' },
      },
      framing.subject,
      framing.baseline,
    ),
    fromSamples(
      {
        name: 'Kafka record, OrderCreated v2, with the writer’s trace context stored (traceparent, tracestate)',
        unit: 'ops/s',
        baselineName: 'the same record with no stored headers',
        goal: { ratio: 0.9, better: 'higher' },
      },
      withStoredHeaders.subject,
      withStoredHeaders.baseline,
    ),
    fromSamples(
      {
        name: 'consumer read, OrderCreated v2, framed value (frame + parseEnvelope)',
        unit: 'ops/s',
        baselineName: 'plain value (frame check + parseEnvelope)',
        goal: { ratio: 0.9, better: 'higher' },
      },
      unframing.subject,
      unframing.baseline,
    ),
  ];
}
