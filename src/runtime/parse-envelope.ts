/**
 * `parseEnvelope` for consumers: checks an incoming message's envelope fields and its payload
 * (with the READER validator, so unknown properties from newer producers are tolerated) and
 * returns a discriminated union narrowed by `eventType` and `schemaVersion`, or one error that
 * lists every violation with its JSON pointer (`/payload/lines/0/quantity`).
 */
import {
  isAggregateVersion,
  isDateTime,
  isUuid,
  type Envelope,
  type EventVersionDescriptor,
} from './envelope.js';
import { decodeMessageBody, MessageBodyError } from './decode-message-body.js';
import { UnknownEventError, ValidationError, type Violation } from './errors.js';

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

const OPTIONAL_STRINGS = ['traceId', 'correlationId', 'causationId'] as const;

function decode(input: unknown): { value: unknown } | { violation: Violation } {
  if (typeof input !== 'string' && !(input instanceof Uint8Array)) return { value: input };
  try {
    return { value: decodeMessageBody(input) };
  } catch (error) {
    if (!(error instanceof MessageBodyError)) throw error;
    return { violation: { pointer: '', keyword: error.problem, message: error.message } };
  }
}

/** A required non-empty string field, or undefined after recording why it is not one. */
function requiredString(
  record: Record<string, unknown>,
  field: string,
  violations: Violation[],
): string | undefined {
  const v = record[field];
  if (typeof v === 'string' && v.length > 0) return v;
  if (v === undefined)
    violations.push({ pointer: `/${field}`, keyword: 'required', message: 'is required' });
  else if (typeof v !== 'string')
    violations.push({ pointer: `/${field}`, keyword: 'type', message: 'must be a string' });
  else
    violations.push({ pointer: `/${field}`, keyword: 'minLength', message: 'must not be empty' });
  return undefined;
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
    if (versions === undefined) byType.set(descriptor.eventType, (versions = new Map()));
    if (versions.has(descriptor.schemaVersion)) {
      throw new Error(`two descriptors for ${descriptor.eventType} v${descriptor.schemaVersion}`);
    }
    versions.set(descriptor.schemaVersion, descriptor);
  }
  const knownTypes = [...byType.keys()].sort();

  return (input) => {
    const decoded = decode(input);
    if ('violation' in decoded) return invalid([decoded.violation]);
    const value = decoded.value;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      return invalid([{ pointer: '', keyword: 'type', message: 'envelope must be an object' }]);
    }
    const record = value as Record<string, unknown>;
    const violations: Violation[] = [];
    const messageId = requiredString(record, 'messageId', violations);
    if (messageId !== undefined && !isUuid(messageId)) {
      violations.push({ pointer: '/messageId', keyword: 'format', message: 'must be a UUID' });
    }
    const eventType = requiredString(record, 'eventType', violations);
    const schemaVersion = record.schemaVersion;
    const versionOk =
      typeof schemaVersion === 'number' &&
      Number.isSafeInteger(schemaVersion) &&
      schemaVersion >= 1;
    if (schemaVersion === undefined)
      violations.push({ pointer: '/schemaVersion', keyword: 'required', message: 'is required' });
    else if (!versionOk)
      violations.push({
        pointer: '/schemaVersion',
        keyword: 'type',
        message: 'must be a positive integer',
      });
    const aggregateType = requiredString(record, 'aggregateType', violations);
    const aggregateId = requiredString(record, 'aggregateId', violations);
    const occurredAt = requiredString(record, 'occurredAt', violations);
    if (occurredAt !== undefined && !isDateTime(occurredAt)) {
      violations.push({
        pointer: '/occurredAt',
        keyword: 'format',
        message: 'must be an RFC 3339 date-time',
      });
    }
    const aggregateVersion = record.aggregateVersion;
    if (aggregateVersion !== undefined && !isAggregateVersion(aggregateVersion)) {
      violations.push({
        pointer: '/aggregateVersion',
        keyword: 'type',
        message: 'must be a non-negative integer',
      });
    }
    for (const field of OPTIONAL_STRINGS) {
      if (record[field] !== undefined && typeof record[field] !== 'string') {
        violations.push({ pointer: `/${field}`, keyword: 'type', message: 'must be a string' });
      }
    }
    if (!('payload' in record))
      violations.push({ pointer: '/payload', keyword: 'required', message: 'is required' });

    // Unknown type or version is its own error: the consumer may simply be older than the producer.
    if (eventType !== undefined) {
      const versions = byType.get(eventType);
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
      if (versionOk && !versions.has(schemaVersion as number)) {
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
    const descriptor =
      eventType !== undefined && versionOk
        ? byType.get(eventType)?.get(schemaVersion as number)
        : undefined;

    let payload: unknown = record.payload;
    if (descriptor !== undefined) {
      if (aggregateType !== undefined && aggregateType !== descriptor.aggregateType) {
        violations.push({
          pointer: '/aggregateType',
          keyword: 'const',
          message: `must be ${JSON.stringify(descriptor.aggregateType)} for ${descriptor.eventType}`,
        });
      }
      if ('payload' in record) {
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
