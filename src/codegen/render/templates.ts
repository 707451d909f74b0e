/**
 * The handlebars environment every target renders with. Compiled with `strict` (a missing value
 * is an error, not an empty string) and `noEscape` (output is code, not HTML). Catalog values
 * can reach the output only through the helpers below; a template that prints anything else
 * (`{{name}}`, `{{{name}}}`) is refused when it is loaded.
 *
 *   {{ident x}}    x as a TypeScript identifier (throws if it is not a safe one)
 *   {{str x}}      x as a single-quoted string literal
 *   {{comment x}}  x as text safe inside `//` and `/* *\/` comments (one line)
 *   {{doc x}}      x as a complete JSDoc block (or nothing when x is empty)
 *   {{json x}}     x as a JSON expression (sorted keys)
 *   {{code x}}     x, which must be `TrustedCode` built by generator code (never a catalog string)
 *   {{num x}}      x, which must be a finite number
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import Handlebars from 'handlebars';
import { commentText, docComment, identifier, jsonLiteral, stringLiteral } from './safe-code.js';

/**
 * Code a generator produced itself (e.g. ajv's standalone output, json-schema-to-typescript's
 * declarations), as opposed to a value from the catalog. Only this may be printed raw.
 */
export class TrustedCode {
  constructor(readonly code: string) {}
  toString(): string {
    return this.code;
  }
}

export function trusted(code: string): TrustedCode {
  return new TrustedCode(code);
}

/** The package's `templates/` folder; this file sits at the same depth in `src/` and `dist/`. */
export const TEMPLATES_DIR = fileURLToPath(new URL('../../../templates/', import.meta.url));

const HELPERS = {
  ident: (value: unknown) => identifier(value),
  str: (value: unknown) => stringLiteral(value),
  comment: (value: unknown) => commentText(value),
  doc: (value: unknown) => docComment(value),
  json: (value: unknown) => jsonLiteral(value),
  code: (value: unknown) => {
    if (!(value instanceof TrustedCode))
      throw new Error('{{code}} accepts only TrustedCode built by a generator');
    return value.code;
  },
  num: (value: unknown) => {
    if (typeof value !== 'number' || !Number.isFinite(value))
      throw new Error(`{{num}} expects a finite number, got ${String(value)}`);
    return String(value);
  },
} as const;

const OUTPUT_HELPERS: ReadonlySet<string> = new Set(Object.keys(HELPERS));
const BLOCK_HELPERS: ReadonlySet<string> = new Set(['each', 'if', 'unless', 'with']);

type AstNode = { type: string; [key: string]: unknown };

function pathName(node: unknown): string {
  const path = node as { type?: string; original?: unknown };
  return path.type === 'PathExpression' ? String(path.original) : `<${path.type ?? 'unknown'}>`;
}

/** Throws unless every output statement of the template goes through an output helper. */
export function assertSafeTemplate(name: string, source: string): void {
  const problems: string[] = [];
  const visit = (node: AstNode | null | undefined): void => {
    if (node === null || node === undefined) return;
    switch (node.type) {
      case 'Program':
        for (const child of node.body as AstNode[]) visit(child);
        return;
      case 'MustacheStatement': {
        const helper = pathName(node.path);
        const params = node.params as unknown[];
        if (!OUTPUT_HELPERS.has(helper) || params.length !== 1) {
          problems.push(
            `{{${helper}}} prints a value without a safe helper (use one of: ${[...OUTPUT_HELPERS].join(', ')})`,
          );
        }
        if (node.escaped === false) problems.push(`{{{${helper}}}} (triple-stash) is not allowed`);
        return;
      }
      case 'BlockStatement': {
        const helper = pathName(node.path);
        if (!BLOCK_HELPERS.has(helper))
          problems.push(`{{#${helper}}} is not an allowed block helper`);
        visit(node.program as AstNode);
        visit(node.inverse as AstNode);
        return;
      }
      case 'ContentStatement':
      case 'CommentStatement':
        return;
      default:
        problems.push(`${node.type} is not allowed in evgen templates`);
    }
  };
  visit(Handlebars.parse(source) as unknown as AstNode);
  if (problems.length > 0)
    throw new Error(`template ${name} is unsafe:\n  ${problems.join('\n  ')}`);
}

export type RenderFunction = (context: object) => string;

/** A handlebars environment with evgen's helpers; templates are checked before they compile. */
export function createTemplateEnvironment() {
  const env = Handlebars.create();
  for (const [helperName, helper] of Object.entries(HELPERS))
    env.registerHelper(helperName, helper);
  return {
    compile(name: string, source: string): RenderFunction {
      assertSafeTemplate(name, source);
      const template = env.compile(source, { strict: true, noEscape: true });
      return (context) => template(context);
    },
  };
}

const environment = createTemplateEnvironment();
const cache = new Map<string, RenderFunction>();

/** Names of the templates in the package's `templates/` folder (without `.hbs`), sorted. */
export function templateNames(): string[] {
  return readdirSync(TEMPLATES_DIR)
    .filter((file) => file.endsWith('.hbs'))
    .map((file) => file.slice(0, -'.hbs'.length))
    .sort();
}

/** Loads and compiles `templates/<name>.hbs` once per process. */
export function loadTemplate(name: string): RenderFunction {
  let template = cache.get(name);
  if (template === undefined) {
    const source = readFileSync(`${TEMPLATES_DIR}${name}.hbs`, 'utf8');
    template = environment.compile(`${name}.hbs`, source);
    cache.set(name, template);
  }
  return template;
}

/** Renders `templates/<name>.hbs` with `context`. */
export function renderTemplate(name: string, context: object): string {
  return loadTemplate(name)(context);
}
