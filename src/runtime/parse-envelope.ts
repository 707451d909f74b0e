/**
 * `parseEnvelope` for consumers: checks an incoming message's envelope fields and its payload
 * (with the READER validator, so unknown properties from newer producers are tolerated) and
 * returns a discriminated union narrowed by `eventType` and `schemaVersion`, or one error that
 * lists every violation with its JSON pointer (`/payload/lines/0/quantity`).
 */
import type { Envelope, EventVersionDescriptor } from './envelope.js';
import { checkField, ENVELOPE_FIELDS, envelopeFieldsValid } from './envelope-fields.js';
import { decodeMessageBody, MessageBodyError } from './decode-message-body.js';
import { UnknownEventError, ValidationError, type Violation } from './errors.js';

/** Positions in ENVELOPE_FIELDS of the fields the parser reads. */
const FIELD = Object.fromEntries(
  ENVELOPE_FIELDS.map((field, index) => [field.name, index]),
) as Readonly<
  Record<
    'messageId' | 'eventType' | 'schemaVersion' | 'aggregateType' | 'aggregateId' | 'occurredAt',
    number
  >
>;
/** The bit mask of `passed` when every field passed. */
const ALL_FIELDS_PASSED = (1 << ENVELOPE_FIELDS.length) - 1;

/** The envelope type a descriptor describes. */
export type EnvelopeOf<D> =
  D extends EventVersionDescriptor<infer TType, infer TVersion, infer TPayload>
    ? Envelope<TType, TVersion, TPayload>
    : never;

/** Unknown event type or version (`UnknownEventError`) versus a malformed message (`ValidationError`). */
export type EnvelopeError = ValidationError | UnknownEventError;

export type ParseEnvelopeResult<TEnvelope> =
  | { readonly ok: true; readonly envelope: TEnvelope }
  | { readonly ok: false; readonly error: EnvelopeError };

export type EnvelopeParser<TEnvelope> = (input: unknown) => ParseEnvelopeResult<TEnvelope>;

/** A body that cannot be decoded, as the violation `parseEnvelope` reports. */
function bodyViolation(error: unknown): Violation {
  if (!(error instanceof MessageBodyError)) throw error;
  return { pointer: '', keyword: error.problem, message: error.message };
}

function invalid(violations: Violation[]): { ok: false; error: ValidationError } {
  return { ok: false, error: new ValidationError('envelope', violations) };
}

/**
 * Builds the parser for a set of descriptors (normally the generated `descriptors` registry).
 * The input may be an object, JSON text or UTF-8 bytes of JSON.
 */
export function createEnvelopeParser<D extends EventVersionDescriptor>(
  descriptors: readonly D[],
): EnvelopeParser<EnvelopeOf<D>> {
  const byType = new Map<string, Map<number, EventVersionDescriptor>>();
  for (const descriptor of descriptors) {
    let versions = byType.get(descriptor.eventType);
    if (versions === undefined)
      byType.set(descriptor.eventType, (versions = new Map<number, EventVersionDescriptor>()));
    if (versions.has(descriptor.schemaVersion)) {
      throw new Error(`two descriptors for ${descriptor.eventType} v${descriptor.schemaVersion}`);
    }
    versions.set(descriptor.schemaVersion, descriptor);
  }
  const knownTypes = [...byType.keys()].sort();
  // The type of the last message: a stream of one type compares strings instead of hashing each
  // freshly parsed `eventType` for the map (a third of the parser's own time in profiles).
  let lastType: string | undefined;
  let lastVersions: Map<number, EventVersionDescriptor> | undefined;

  return (input) => {
    let value = input;
    if (typeof input === 'string' || input instanceof Uint8Array) {
      try {
        value = decodeMessageBody(input);
      } catch (error) {
        return invalid([bodyViolation(error)]);
      }
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      return invalid([{ pointer: '', keyword: 'type', message: 'envelope must be an object' }]);
    }
    const record = value as Record<string, unknown>;
    const violations: Violation[] = [];
    // Valid fields are the common case; only otherwise does the table loop find the violations.
    // Fields the rest of the parse reads are kept only when they passed, so a bad one is reported
    // once, not again as a mismatch. (A bit mask: this runs for every message.)
    let passed = ALL_FIELDS_PASSED;
    if (!envelopeFieldsValid(record)) {
      passed = 0;
      for (let i = 0; i < ENVELOPE_FIELDS.length; i++) {
        const field = ENVELOPE_FIELDS[i]!;
        if (checkField(field, record[field.name], violations)) passed |= 1 << i;
      }
    }
    const messageId = passed & (1 << FIELD.messageId) ? (record.messageId as string) : undefined;
    const eventType = passed & (1 << FIELD.eventType) ? (record.eventType as string) : undefined;
    const aggregateType =
      passed & (1 << FIELD.aggregateType) ? (record.aggregateType as string) : undefined;
    const aggregateId =
      passed & (1 << FIELD.aggregateId) ? (record.aggregateId as string) : undefined;
    const occurredAt = passed & (1 << FIELD.occurredAt) ? (record.occurredAt as string) : undefined;
    const schemaVersion = record.schemaVersion;
    const versionOk = (passed & (1 << FIELD.schemaVersion)) !== 0;
    const aggregateVersion = record.aggregateVersion;
    const hasPayload = 'payload' in record;
    if (!hasPayload)
      violations.push({ pointer: '/payload', keyword: 'required', message: 'is required' });

    // Unknown type or version is its own error: the consumer may simply be older than the producer.
    let descriptor: EventVersionDescriptor | undefined;
    if (eventType !== undefined) {
      let versions = eventType === lastType ? lastVersions : undefined;
      if (versions === undefined) {
        versions = byType.get(eventType);
        if (versions !== undefined) {
          lastType = eventType;
          lastVersions = versions;
        }
      }
      if (versions === undefined) {
        return {
          ok: false,
          error: new UnknownEventError(
            eventType,
            versionOk ? (schemaVersion as number) : undefined,
            `unknown event type ${JSON.stringify(eventType)} (known: ${knownTypes.join(', ')})`,
          ),
        };
      }
      if (versionOk) {
        descriptor = versions.get(schemaVersion as number);
        if (descriptor === undefined) {
          const known = [...versions.keys()].sort((a, b) => a - b).join(', ');
          return {
            ok: false,
            error: new UnknownEventError(
              eventType,
              schemaVersion as number,
              `unknown version ${String(schemaVersion)} of ${eventType} (known: ${known})`,
            ),
          };
        }
      }
    }

    let payload: unknown = record.payload;
    if (descriptor !== undefined) {
      if (aggregateType !== undefined && aggregateType !== descriptor.aggregateType) {
        violations.push({
          pointer: '/aggregateType',
          keyword: 'const',
          message: `must be ${JSON.stringify(descriptor.aggregateType)} for ${descriptor.eventType}`,
        });
      }
      if (hasPayload) {
        const checked = descriptor.readPayload(record.payload);
        if (checked.ok) {
          payload = checked.value;
          const payloadId = (checked.value as Record<string, unknown>)[
            descriptor.aggregateIdProperty
          ];
          if (aggregateId !== undefined && payloadId !== aggregateId) {
            violations.push({
              pointer: '/aggregateId',
              keyword: 'aggregateId',
              message: `must equal payload.${descriptor.aggregateIdProperty} (${JSON.stringify(payloadId)})`,
            });
          }
        } else {
          for (const v of checked.violations)
            violations.push({ ...v, pointer: `/payload${v.pointer}` });
        }
      }
    }
    if (violations.length > 0 || descriptor === undefined) return invalid(violations);

    const traceId = record.traceId;
    const correlationId = record.correlationId;
    const causationId = record.causationId;
    // Without optional fields (the common case), one object literal of a fixed shape.
    const envelope: Envelope =
      aggregateVersion === undefined &&
      traceId === undefined &&
      correlationId === undefined &&
      causationId === undefined
        ? {
            messageId: messageId!,
            eventType: descriptor.eventType,
            schemaVersion: descriptor.schemaVersion,
            aggregateType: aggregateType!,
            aggregateId: aggregateId!,
            occurredAt: occurredAt!,
            payload,
          }
        : {
            messageId: messageId!,
            eventType: descriptor.eventType,
            schemaVersion: descriptor.schemaVersion,
            aggregateType: aggregateType!,
            aggregateId: aggregateId!,
            ...(aggregateVersion !== undefined
              ? { aggregateVersion: aggregateVersion as number }
              : {}),
            occurredAt: occurredAt!,
            ...(typeof traceId === 'string' ? { traceId } : {}),
            ...(typeof correlationId === 'string' ? { correlationId } : {}),
            ...(typeof causationId === 'string' ? { causationId } : {}),
            payload,
          };
    return { ok: true, envelope: envelope as EnvelopeOf<D> };
  };
}
