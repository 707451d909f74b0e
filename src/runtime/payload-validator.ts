/**
 * Adapts ajv's compiled (standalone) validation functions to evgen's `PayloadValidator`:
 * ajv errors become `Violation`s whose JSON pointer names the offending value itself
 * (for `required` and `additionalProperties`, the missing or extra property), with ajv's
 * message made from the error's keyword and parameters.
 */
import type { Violation } from './errors.js';
import { escapePointerSegment } from './json-pointer.js';
import { schemaErrorMessage } from './schema-error-message.js';

/** Result of validating a value against one schema. */
export type ValidationResult<T> = { ok: true; value: T } | { ok: false; violations: Violation[] };

/** Checks one payload against one version's schema; violations point into the payload. */
export type PayloadValidator<T> = (payload: unknown) => ValidationResult<T>;

/** The part of an ajv `ErrorObject` evgen reads. */
interface CompiledSchemaError {
  readonly instancePath: string;
  readonly keyword: string;
  readonly message?: string;
  readonly params: Readonly<Record<string, unknown>>;
}

/** An ajv validation function (`ValidateFunction`), as ajv's standalone code exports it. */
export type CompiledSchemaFunction = ((data: unknown) => boolean) & {
  errors?: readonly CompiledSchemaError[] | null;
};

/** Converts one ajv error into a violation located at the value it is about. */
export function violationFromSchemaError(error: CompiledSchemaError): Violation {
  const { keyword, params, instancePath } = error;
  if (keyword === 'required' && typeof params.missingProperty === 'string') {
    return {
      pointer: `${instancePath}/${escapePointerSegment(params.missingProperty)}`,
      keyword,
      message: 'is required',
    };
  }
  if (keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
    return {
      pointer: `${instancePath}/${escapePointerSegment(params.additionalProperty)}`,
      keyword,
      message: 'is not declared by the schema (writers may not add undeclared properties)',
    };
  }
  if (keyword === 'unevaluatedProperties' && typeof params.unevaluatedProperty === 'string') {
    return {
      pointer: `${instancePath}/${escapePointerSegment(params.unevaluatedProperty)}`,
      keyword,
      message: 'is not declared by the schema (writers may not add undeclared properties)',
    };
  }
  // Generated validators carry no message text (it is made on failure only); code generated
  // by an earlier evgen still does.
  return {
    pointer: instancePath,
    keyword,
    message: error.message ?? schemaErrorMessage(keyword, params),
  };
}

/** Wraps a compiled schema function; the result lists every violation ajv found (allErrors). */
export function payloadValidator<T>(validate: CompiledSchemaFunction): PayloadValidator<T> {
  return (payload) => {
    if (validate(payload)) return { ok: true, value: payload as T };
    const seen = new Set<string>();
    const violations: Violation[] = [];
    for (const error of validate.errors ?? []) {
      const violation = violationFromSchemaError(error);
      const key = `${violation.pointer}\u0000${violation.keyword}\u0000${violation.message}`;
      if (!seen.has(key)) {
        seen.add(key);
        violations.push(violation);
      }
    }
    return { ok: false, violations };
  };
}
