/**
 * Confluent's wire format for a Kafka record value: magic byte 0, the schema id as a 4-byte
 * big-endian integer, then the serialized data (here the envelope's JSON). Serializers and
 * deserializers of Confluent, kafkajs' schema-registry client and Apicurio's serdes all read and
 * write it. A plain evgen value is JSON text, whose first byte is never 0, so framed and plain
 * records tell themselves apart and can share a topic during a migration.
 */

const CONFLUENT_MAGIC_BYTE = 0;
const HEADER_BYTES = 5;

/** The framed value: magic byte, schema id, data. */
export function frameConfluent(schemaId: number, data: Uint8Array): Buffer {
  if (!Number.isInteger(schemaId) || schemaId < 0 || schemaId > 0x7fffffff)
    throw new RangeError(`schema id must be a non-negative 32-bit integer (got ${schemaId})`);
  const framed = Buffer.allocUnsafe(HEADER_BYTES + data.byteLength);
  framed[0] = CONFLUENT_MAGIC_BYTE;
  framed.writeInt32BE(schemaId, 1);
  framed.set(data, HEADER_BYTES);
  return framed;
}

/** The schema id and data of a framed value; undefined for a plain one (or a tombstone). */
export function readConfluentFrame(
  value: Uint8Array | null,
): { readonly schemaId: number; readonly data: Uint8Array } | undefined {
  if (value === null || value.byteLength < HEADER_BYTES || value[0] !== CONFLUENT_MAGIC_BYTE)
    return undefined;
  const view = new DataView(value.buffer, value.byteOffset, value.byteLength);
  return { schemaId: view.getInt32(1, false), data: value.subarray(HEADER_BYTES) };
}
