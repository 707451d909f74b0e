/**
 * ajv's English error message, made from an error's keyword and parameters. Generated validators
 * are compiled without messages (each check would otherwise carry its message text in the
 * generated module); the text is made here only when a payload fails, word for word as ajv
 * writes it.
 */

/** The parameters of an ajv error (`ErrorObject.params`). */
type Params = Readonly<Record<string, unknown>>;

const text = (value: unknown) => String(value);

/** "more" for the upper bound keywords (`maxLength`, …), "fewer" for the lower ones. */
const comparison = (keyword: string) => (keyword.startsWith('max') ? 'more' : 'fewer');

const MESSAGES: Readonly<Record<string, (params: Params, keyword: string) => string>> = {
  type: (p) => `must be ${text(p.type)}`,
  format: (p) => `must match format "${text(p.format)}"`,
  pattern: (p) => `must match pattern "${text(p.pattern)}"`,
  enum: () => 'must be equal to one of the allowed values',
  const: () => 'must be equal to constant',
  required: (p) => `must have required property '${text(p.missingProperty)}'`,
  additionalProperties: () => 'must NOT have additional properties',
  unevaluatedProperties: () => 'must NOT have unevaluated properties',
  minLength: (p, k) => `must NOT have ${comparison(k)} than ${text(p.limit)} characters`,
  maxLength: (p, k) => `must NOT have ${comparison(k)} than ${text(p.limit)} characters`,
  minItems: (p, k) => `must NOT have ${comparison(k)} than ${text(p.limit)} items`,
  maxItems: (p, k) => `must NOT have ${comparison(k)} than ${text(p.limit)} items`,
  minProperties: (p, k) => `must NOT have ${comparison(k)} than ${text(p.limit)} properties`,
  maxProperties: (p, k) => `must NOT have ${comparison(k)} than ${text(p.limit)} properties`,
  minimum: (p) => `must be ${text(p.comparison)} ${text(p.limit)}`,
  maximum: (p) => `must be ${text(p.comparison)} ${text(p.limit)}`,
  exclusiveMinimum: (p) => `must be ${text(p.comparison)} ${text(p.limit)}`,
  exclusiveMaximum: (p) => `must be ${text(p.comparison)} ${text(p.limit)}`,
  // ajv-formats' `formatMinimum` family says "should", unlike ajv's own keywords.
  formatMinimum: (p) => `should be ${text(p.comparison)} ${text(p.limit)}`,
  formatMaximum: (p) => `should be ${text(p.comparison)} ${text(p.limit)}`,
  formatExclusiveMinimum: (p) => `should be ${text(p.comparison)} ${text(p.limit)}`,
  formatExclusiveMaximum: (p) => `should be ${text(p.comparison)} ${text(p.limit)}`,
  multipleOf: (p) => `must be multiple of ${text(p.multipleOf)}`,
  uniqueItems: (p) =>
    `must NOT have duplicate items (items ## ${text(p.j)} and ${text(p.i)} are identical)`,
  // `items` (2020-12 after prefixItems), `additionalItems` and `unevaluatedItems` cap the length.
  items: (p) => `must NOT have more than ${text(p.limit)} items`,
  additionalItems: (p) => `must NOT have more than ${text(p.limit)} items`,
  unevaluatedItems: (p) => `must NOT have more than ${text(p.limit)} items`,
  contains: (p) =>
    p.maxContains === undefined
      ? `must contain at least ${text(p.minContains)} valid item(s)`
      : `must contain at least ${text(p.minContains)} and no more than ${text(p.maxContains)} valid item(s)`,
  dependencies: dependencyMessage,
  dependentRequired: dependencyMessage,
  propertyNames: () => 'property name must be valid',
  not: () => 'must NOT be valid',
  anyOf: () => 'must match a schema in anyOf',
  oneOf: () => 'must match exactly one schema in oneOf',
  if: (p) => `must match "${text(p.failingKeyword)}" schema`,
  'false schema': () => 'boolean schema is false',
};

function dependencyMessage(p: Params): string {
  const noun = p.depsCount === 1 ? 'property' : 'properties';
  return `must have ${noun} ${text(p.deps)} when property ${text(p.property)} is present`;
}

/** The message ajv would have written for this keyword and these parameters. */
export function schemaErrorMessage(keyword: string, params: Params): string {
  const message = Object.hasOwn(MESSAGES, keyword) ? MESSAGES[keyword] : undefined;
  return message === undefined ? `fails ${keyword}` : message(params, keyword);
}
