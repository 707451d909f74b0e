/**
 * ajv set up as the generated validators are (the options that change what passes), one
 * instance per dialect: tests check values against a schema's writer or reader view with it.
 */
import { Ajv, type Options } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { JsonSchema } from 'evgen';
import { dialectOf } from '../../../src/schema/views.js';

const addFormats = addFormatsModule.default;
// The options of the validators target (src/codegen/targets/validators.ts) that change what passes.
const OPTIONS: Options = {
  allErrors: true,
  strict: false,
  strictNumbers: true,
  validateFormats: true,
  ownProperties: true,
};

// One instance per dialect: creating ajv (and its meta-schemas) per schema would dominate a run.
const AJV = { draft07: new Ajv(OPTIONS), d2020: new Ajv2020(OPTIONS) };
addFormats(AJV.draft07);
addFormats(AJV.d2020);

/** A compiled validator for `schema`, in its dialect. */
export function validator(schema: JsonSchema): (value: unknown) => boolean {
  const validate = (dialectOf(schema) === 'draft-07' ? AJV.draft07 : AJV.d2020).compile(
    schema as object,
  );
  return (value) => validate(value);
}
