/**
 * The checks of every envelope field except the payload, in one table that both sides use:
 * `parseEnvelope` runs them on what arrives, `createEnvelope` on the fields a caller sets. So
 * whatever a constructor accepts, every consumer accepts, and both report a bad field with the
 * same pointer, keyword and message.
 */
import type { Violation } from './errors.js';
import { isAggregateVersion, isDateTime, isSchemaVersion, isUuid } from './envelope-values.js';

/** One check of a field's value; the first failing check of a field is its violation. */
interface ValueCheck {
  readonly keyword: string;
  readonly message: string;
  readonly test: (value: unknown) => boolean;
}

interface EnvelopeField {
  readonly name: string;
  /** A missing (undefined) value is a `required` violation; otherwise it is simply absent. */
  readonly required: boolean;
  readonly checks: readonly ValueCheck[];
}

const isString = {
  keyword: 'type',
  message: 'must be a string',
  test: (v: unknown) => typeof v === 'string',
};
const notEmpty = {
  keyword: 'minLength',
  message: 'must not be empty',
  test: (v: unknown) => v !== '',
};
const requiredString = (name: string, format?: ValueCheck): EnvelopeField => ({
  name,
  required: true,
  checks: format === undefined ? [isString, notEmpty] : [isString, notEmpty, format],
});
const optionalString = (name: string): EnvelopeField => ({
  name,
  required: false,
  checks: [isString],
});

const MESSAGE_ID_FIELD = requiredString('messageId', {
  keyword: 'format',
  message: 'must be a UUID in canonical text form (8-4-4-4-12 hex digits, any version or case)',
  test: (v) => isUuid(v as string),
});
export const OCCURRED_AT_FIELD = requiredString('occurredAt', {
  keyword: 'format',
  message: 'must be an RFC 3339 date-time',
  test: (v) => isDateTime(v as string),
});
const AGGREGATE_VERSION_FIELD: EnvelopeField = {
  name: 'aggregateVersion',
  required: false,
  checks: [
    { keyword: 'type', message: 'must be a non-negative integer', test: isAggregateVersion },
  ],
};

/** Every field but the payload, in the order violations are reported. */
export const ENVELOPE_FIELDS: readonly EnvelopeField[] = [
  MESSAGE_ID_FIELD,
  requiredString('eventType'),
  {
    name: 'schemaVersion',
    required: true,
    checks: [
      {
        keyword: 'type',
        message: 'must be a positive integer',
        test: isSchemaVersion,
      },
    ],
  },
  requiredString('aggregateType'),
  requiredString('aggregateId'),
  OCCURRED_AT_FIELD,
  AGGREGATE_VERSION_FIELD,
  optionalString('traceId'),
  optionalString('correlationId'),
  optionalString('causationId'),
];

/**
 * Checks one field's value; pushes its violation (at `/<name>`) and returns false when it fails.
 * An absent optional field passes.
 */
export function checkField(field: EnvelopeField, value: unknown, violations: Violation[]): boolean {
  if (value === undefined) {
    if (!field.required) return true;
    violations.push({ pointer: `/${field.name}`, keyword: 'required', message: 'is required' });
    return false;
  }
  const checks = field.checks;
  for (let i = 0; i < checks.length; i++) {
    const check = checks[i]!;
    if (check.test(value)) continue;
    violations.push({ pointer: `/${field.name}`, keyword: check.keyword, message: check.message });
    return false;
  }
  return true;
}

const isNonEmptyString = (value: unknown): value is string =>
  typeof value === 'string' && value !== '';
const isOptionalString = (value: unknown) => value === undefined || typeof value === 'string';

/**
 * Whether every field of ENVELOPE_FIELDS passes `checkField`, written out field by field:
 * `parseEnvelope` asks this of every message, and named reads with direct calls cost a third of
 * the table loop (one keyed read and a call through a different closure per check). The loop
 * still runs when this says no, to report what failed; a test keeps the two in agreement.
 */
export function envelopeFieldsValid(record: Readonly<Record<string, unknown>>): boolean {
  const messageId = record.messageId;
  const occurredAt = record.occurredAt;
  const aggregateVersion = record.aggregateVersion;
  return (
    isNonEmptyString(messageId) &&
    isUuid(messageId) &&
    isNonEmptyString(record.eventType) &&
    isSchemaVersion(record.schemaVersion) &&
    isNonEmptyString(record.aggregateType) &&
    isNonEmptyString(record.aggregateId) &&
    isNonEmptyString(occurredAt) &&
    isDateTime(occurredAt) &&
    (aggregateVersion === undefined || isAggregateVersion(aggregateVersion)) &&
    isOptionalString(record.traceId) &&
    isOptionalString(record.correlationId) &&
    isOptionalString(record.causationId)
  );
}
