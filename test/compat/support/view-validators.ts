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
  // ajv's optimising pass only tidies the generated code (the same verdicts) and costs compile
  // time; the soundness test compiles two views per pair.
  code: { optimize: false },
};

function instances() {
  const ajv = { draft07: new Ajv(OPTIONS), d2020: new Ajv2020(OPTIONS) };
  addFormats(ajv.draft07);
  addFormats(ajv.d2020);
  return ajv;
}

// Creating ajv (and its meta-schemas) per schema would dominate a run, but one instance keeps
// every function it compiled (its code scope holds them): thousands of views grow the heap until
// garbage collection dominates instead. So an instance serves a bounded number of compiles.
const COMPILES_PER_INSTANCE = 500;
let AJV = instances();
let compiles = 0;

/** A compiled validator for `schema`, in its dialect. */
export function validator(schema: JsonSchema): (value: unknown) => boolean {
  if (++compiles > COMPILES_PER_INSTANCE) {
    AJV = instances();
    compiles = 1;
  }
  const validate = (dialectOf(schema) === 'draft-07' ? AJV.draft07 : AJV.d2020).compile(
    schema as object,
  );
  return (value) => validate(value);
}
