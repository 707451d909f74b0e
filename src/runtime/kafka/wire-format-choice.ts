/**
 * Which records a Kafka producer writes in Confluent's wire format (magic byte 0, schema id, JSON)
 * and which as the plain envelope JSON. The catalog chooses: `evgen build` marks each framed event
 * in `kafkaRoutes` (`wireFormat: 'confluent'`, from event.json's `kafka.wireFormat` or the
 * catalog's default), and the producer brings the schema ids. Both halves must agree, and a
 * disagreement is a programming error said at once, never a silent choice: a catalog that frames
 * an event whose producer has no ids would otherwise send plain records the registry's clients
 * cannot read, and ids given for a catalog that frames nothing would be ignored.
 */
import type { SchemaIds } from '../registry/schema-ids.js';

/** How an event's records are written: the envelope's JSON, or framed with its schema id. */
export type KafkaWireFormat = 'json' | 'confluent';

/**
 * Confluent's wire format for the record values (magic byte 0, the schema id, the envelope JSON),
 * with the ids `evgen registry push` registered. Without it values are the plain JSON envelope.
 */
export interface ConfluentWireFormat {
  /** Resolves and caches the id of each event version (`createSchemaIds`). */
  readonly schemaIds: SchemaIds;
  /**
   * The event types written framed, overriding the catalog's choice (for a migration by hand);
   * default: the events the catalog marks (`wireFormat: 'confluent'` in `kafkaRoutes`).
   */
  readonly eventTypes?: readonly string[];
}

/** The part of a route the choice reads. */
interface WireFormatRoute {
  readonly wireFormat?: KafkaWireFormat;
}

function missingIds(eventTypes: readonly string[]): TypeError {
  return new TypeError(
    `the catalog writes ${eventTypes.join(', ')} in Confluent's wire format (wireFormat "confluent"), but no schema ids were given: pass { wireFormat: { schemaIds: createSchemaIds(…) } }, or set wireFormat "json" in the catalog`,
  );
}

/**
 * The framing of `eventType`'s record: `wireFormat` when it is framed (listed in `eventTypes` when
 * the producer lists them, else its route is marked), undefined for plain JSON. Throws a TypeError
 * when the route is marked and there are no schema ids.
 */
export function framingFor(
  route: WireFormatRoute,
  eventType: string,
  wireFormat: ConfluentWireFormat | undefined,
): ConfluentWireFormat | undefined {
  if (wireFormat?.eventTypes !== undefined)
    return wireFormat.eventTypes.includes(eventType) ? wireFormat : undefined;
  if (route.wireFormat !== 'confluent') return undefined;
  if (wireFormat === undefined) throw missingIds([eventType]);
  return wireFormat;
}

/**
 * Checked when a relay publisher is created, for its whole route table: marked routes need schema
 * ids, and schema ids without `eventTypes` need a marked route (else they would frame nothing).
 */
export function checkWireFormatRoutes(
  routes: Readonly<Record<string, WireFormatRoute>>,
  wireFormat: ConfluentWireFormat | undefined,
): void {
  if (wireFormat?.eventTypes !== undefined) return;
  const marked = Object.keys(routes)
    .filter((eventType) => routes[eventType]!.wireFormat === 'confluent')
    .sort();
  if (wireFormat === undefined && marked.length > 0) throw missingIds(marked);
  if (wireFormat !== undefined && marked.length === 0)
    throw new TypeError(
      'wireFormat was given, but no route is marked wireFormat "confluent" and no eventTypes are listed, so no record would be framed: set "wireFormat": "confluent" in evgen.config.json or an event.json\'s kafka block and run evgen build, or list the event types in wireFormat.eventTypes',
    );
}
