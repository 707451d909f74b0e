/**
 * The golden outputs are real code: they type-check with the repo's compiler settings, import
 * and run (under vitest and under plain Node ESM), and behave as promised — strict writers,
 * tolerant readers, pointers to every violation — even for a catalog full of injection attempts.
 */
import { runTarget } from '../support/run-target.js';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as ts from 'typescript';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { Violation } from 'evgen/runtime';
import { loadCatalog } from '../../src/catalog/load-catalog.js';
import { validatorsTarget } from '../../src/codegen/targets/validators.js';
import { caseEventsDir, EXAMPLE_CASE, expectedDir, goldenCases, listFiles } from './golden-support.js';
import { typecheckProgram } from '../support/typecheck.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

/** Loads `expected/index.ts` of a case as an untyped module (its types are checked separately). */
async function importCase(name: string): Promise<Record<string, any>> {
  return (await import(join(expectedDir(name), 'index.ts'))) as Record<string, any>;
}

function summary(violations: readonly Violation[]): string[] {
  return violations.map((v) => `${v.pointer} ${v.keyword}`).sort();
}

describe('generated code type-checks', () => {
  it('every golden output and generated/ compile without errors under the repo tsconfig', () => {
    const roots = [
      ...goldenCases().flatMap((name) =>
        listFiles(expectedDir(name))
          .filter((file) => file.endsWith('.ts'))
          .map((file) => join(expectedDir(name), file)),
      ),
    ];
    const { program, diagnostics } = typecheckProgram(roots);
    expect(diagnostics).toEqual([]);
    // The program really contained the golden files (not an empty root set).
    const compiled = new Set(program.getSourceFiles().map((f) => f.fileName));
    expect(roots.filter((root) => compiled.has(root)).length).toBeGreaterThan(20);
  });
});

describe('injection catalog', () => {
  const ATTACK = '*/ process.exit(1) /*';
  const QUOTES = "\"'`${x}`";

  it('imports without executing anything and keeps hostile names as plain data', async () => {
    const exit = vi.spyOn(process, 'exit').mockImplementation(() => {
      throw new Error('generated code called process.exit');
    });
    try {
      const mod = await importCase('injection');
      expect(exit).not.toHaveBeenCalled();
      const payload = { id: 'agg-1', [ATTACK]: QUOTES, [QUOTES]: 3, constructor: 'c', 'with space': true, nested: { x: 'plain' }, constValue: ATTACK };
      const envelope = mod.injectedV1(payload);
      expect(envelope.aggregateId).toBe('agg-1');
      expect(envelope.payload[ATTACK]).toBe(QUOTES);

      for (const value of [ATTACK, QUOTES, 'a\nb', '\u2028', '\\', "'", '${process.exit(1)}']) {
        expect(mod.validateInjectedV1Payload({ ...payload, [ATTACK]: value }).ok, JSON.stringify(value)).toBe(true);
      }
      const wrong = mod.validateInjectedV1Payload({ ...payload, [ATTACK]: 'harmless', nested: { x: "it's" }, constValue: 'other', extra: 1 });
      expect(summary(wrong.violations)).toEqual([
        '/*~1 process.exit(1) ~1* enum',
        '/constValue const',
        '/extra additionalProperties',
        '/nested/x pattern',
      ]);
      expect(mod.readInjectedV1Payload({ ...payload, extra: 1, nested: { x: 'ok', more: 2 } }).ok).toBe(true);

      const parsed = mod.parseEnvelope(JSON.parse(JSON.stringify(envelope)));
      expect(parsed.ok).toBe(true);
      expect(mod.injectedV1Descriptor.eventType).toBe('evil.Injected');
      expect(exit).not.toHaveBeenCalled();
    } finally {
      exit.mockRestore();
    }
  });

  it('checks own properties only: an absent optional "constructor" is absent, not Object.prototype.constructor', async () => {
    const mod = await importCase('injection');
    const minimal = JSON.parse(`{"id": "agg-1", ${JSON.stringify(ATTACK)}: "'"}`) as unknown;
    expect(mod.validateInjectedV1Payload(minimal).ok).toBe(true);
    expect(mod.readInjectedV1Payload(minimal).ok).toBe(true);
    expect(summary(mod.validateInjectedV1Payload({ ...(minimal as object), constructor: 5 }).violations)).toEqual(['/constructor type']);
    // An inherited property is not a property of the payload: it neither satisfies nor breaks a rule.
    const inherited = Object.assign(Object.create({ id: 'from-prototype' }) as object, { [ATTACK]: "'" });
    expect(summary(mod.validateInjectedV1Payload(inherited).violations)).toEqual(['/id required']);
  });

  it.each(['injection', 'injection-keys'])('keeps every hostile string out of code positions (%s)', (name) => {
    for (const file of listFiles(expectedDir(name))) {
      const text = readFileSync(join(expectedDir(name), file), 'utf8');
      // Any `process.exit(1)` must sit inside a comment or a string literal: strip both and look again.
      const kind = file.endsWith('.js') ? ts.ScriptKind.JS : ts.ScriptKind.TS;
      const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, false, kind);
      const scanner = ts.createScanner(ts.ScriptTarget.ES2022, true, ts.LanguageVariant.Standard, text);
      let code = '';
      for (let token = scanner.scan(); token !== ts.SyntaxKind.EndOfFileToken; token = scanner.scan()) {
        if (token === ts.SyntaxKind.StringLiteral || token === ts.SyntaxKind.NoSubstitutionTemplateLiteral) code += ' "" ';
        else if (token === ts.SyntaxKind.RegularExpressionLiteral) code += ' /re/ ';
        else code += ` ${scanner.getTokenText()}`;
      }
      expect(code, file).not.toMatch(/process\s*\.\s*exit/);
      expect((source as unknown as { parseDiagnostics: unknown[] }).parseDiagnostics, file).toEqual([]);
    }
  });
});

describe('injection through keys json-schema-to-typescript copies into comments', () => {
  it('imports without executing anything; the validators still use the real patterns', async () => {
    const exit = vi.spyOn(process, 'exit').mockImplementation(() => {
      throw new Error('generated code called process.exit');
    });
    try {
      const mod = await importCase('injection-keys');
      expect(exit).not.toHaveBeenCalled();
      // Keys matching the hostile patterns (`(7)` is a regex group: it matches "7").
      const draft07 = { id: 'k-1', meta: { '//;process.exit7;': 'tag' }, titled: { 'yy//;process-exit9;//': 3 } };
      expect(mod.validatePatternKeysV1Payload(draft07).ok).toBe(true);
      expect(mod.patternKeysV1(draft07).aggregateId).toBe('k-1');
      // The pattern still applies: a key matching `y*/y*/…` must hold an integer.
      expect(summary(mod.validatePatternKeysV1Payload({ id: 'k-1', titled: { '//;process.exit9;': 'no', other: 1 } }).violations)).toEqual([
        '/titled/other additionalProperties',
        '/titled/~1~1;process.exit9; type',
      ]);
      const modern = { id: 'k-2', meta: { 'x//;process.exit7;': 'tag' }, items: ['a', { '//;process.exit11;': 'q' }] };
      expect(mod.validatePatternKeysModernV1Payload(modern).ok).toBe(true);
      expect(exit).not.toHaveBeenCalled();
    } finally {
      exit.mockRestore();
    }
  });
});

describe('2020-12 catalog ($defs, allOf, oneOf, prefixItems)', () => {
  const valid = () => ({
    cartId: '0190a6a4-1f2b-7c3d-8e4f-5a6b7c8d9e0f',
    checkedOutAt: '2026-11-29T10:00:00Z',
    items: [{ sku: 'SKU-1', qty: 1 }],
    discount: { kind: 'percent', percent: 10 },
    coordinates: [52.5, 13.4],
    note: null,
    labels: { anything: 'goes', here: 'too' },
  });

  it('the writer closes the root (unevaluatedProperties, allOf-declared fields allowed), $defs items and oneOf branches', async () => {
    const mod = await importCase('dialect-2020');
    expect(mod.validateCartCheckedOutV1Payload(valid()).ok).toBe(true);
    const result = mod.validateCartCheckedOutV1Payload({
      ...valid(),
      extra: 1,
      items: [{ sku: 'SKU-1', qty: 1, colour: 'red' }],
      discount: { kind: 'fixed', amountMinor: 5, percent: 3 },
      coordinates: [1, 2, 3],
    });
    expect(result.ok).toBe(false);
    expect(summary(result.violations)).toEqual(
      expect.arrayContaining(['/extra unevaluatedProperties', '/items/0/colour additionalProperties', '/coordinates items']),
    );
    expect(summary(result.violations).some((line) => line.startsWith('/discount'))).toBe(true);
  });

  it('the reader accepts unknown properties everywhere but keeps every other rule', async () => {
    const mod = await importCase('dialect-2020');
    expect(mod.readCartCheckedOutV1Payload({ ...valid(), extra: 1, items: [{ sku: 'SKU-1', qty: 1, colour: 'red' }], discount: { kind: 'fixed', amountMinor: 5, note: 'x' } }).ok).toBe(true);
    const { checkedOutAt: _missing, ...rest } = valid();
    const bad = mod.readCartCheckedOutV1Payload({ ...rest, items: [{ sku: 'SKU-1', qty: 0 }], note: 5 });
    expect(summary(bad.violations)).toEqual(expect.arrayContaining(['/checkedOutAt required', '/items/0/qty minimum', '/note type']));
  });
});

describe('$ref to _common catalog', () => {
  const invoice = () => ({
    invoiceId: '0190a6a4-1f2b-7c3d-8e4f-5a6b7c8d9e0f',
    billTo: { name: 'ACME', address: { city: 'Bern', country: 'CH' } },
    total: { amountMinor: 100, currency: 'CHF' },
    lines: [{ text: 'Widget', amount: { amountMinor: 100, currency: 'CHF' } }],
  });

  it('validates through nested file references and closes the shared schemas for writers only', async () => {
    const mod = await importCase('common-ref');
    expect(mod.invoiceIssuedV2({ ...invoice(), dueDate: '2026-12-31' }).schemaVersion).toBe(2);
    const bad = mod.validateInvoiceIssuedV2Payload({
      ...invoice(),
      dueDate: 'soon',
      billTo: { name: 'ACME', address: { city: 'Bern', country: 'Switzerland', zip: '3000' } },
      total: { amountMinor: 100, currency: 'GBP' },
    });
    expect(summary(bad.violations)).toEqual([
      '/billTo/address/country pattern',
      '/billTo/address/zip additionalProperties',
      '/dueDate format',
      '/total/currency enum',
    ]);
    expect(mod.readInvoiceIssuedV1Payload({ ...invoice(), dueDate: '2026-12-31', billTo: { ...invoice().billTo, vatId: 'x' } }).ok).toBe(true);
    expect(summary(mod.readInvoiceIssuedV1Payload({ ...invoice(), total: { amountMinor: 1, currency: 'GBP' } }).violations)).toEqual(['/total/currency enum']);
  });
});

describe('validators.js under plain Node ESM', () => {
  const scratch = join(REPO, 'tmp', `golden-node-${randomBytes(4).toString('hex')}`);
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('imports and validates without vitest or a TypeScript loader', async () => {
    // The runtime's adapter, its message maker and the pattern engine, transpiled to JS beside
    // the output (they import nothing else but types and re2js).
    const transpiled = (file: string) =>
      ts.transpileModule(readFileSync(join(REPO, 'src/runtime', file), 'utf8'), {
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: false },
      }).outputText;
    const catalog = await loadCatalog(caseEventsDir(EXAMPLE_CASE));
    const files = await runTarget(validatorsTarget, { catalog, runtimeImport: '../../runtime.js' });
    mkdirSync(scratch, { recursive: true });
    writeFileSync(join(scratch, 'payload-validator.js'), transpiled('payload-validator.ts'));
    writeFileSync(join(scratch, 'linear-pattern.js'), transpiled('linear-pattern.ts'));
    writeFileSync(
      join(scratch, 'runtime.js'),
      "export * from './payload-validator.js';\nexport * from './linear-pattern.js';\n",
    );
    writeFileSync(join(scratch, 'schema-error-message.js'), transpiled('schema-error-message.ts'));
    writeFileSync(join(scratch, 'json-pointer.js'), transpiled('json-pointer.ts'));
    writeFileSync(join(scratch, 'package.json'), '{ "type": "module" }\n');
    for (const file of files) {
      mkdirSync(dirname(join(scratch, file.path)), { recursive: true });
      writeFileSync(join(scratch, file.path), file.content);
    }
    const script = `
      const m = await import('./order/order-created/validators.js');
      const r = m.validateOrderCreatedV2Payload({ orderId: 'x', extra: 1 });
      const ok = m.readOrderCreatedV1Payload({ orderId: '0190a6a4-1f2b-7c3d-8e4f-5a6b7c8d9e0f' });
      console.log(JSON.stringify({ writer: r.violations.map((v) => v.pointer + ' ' + v.keyword).sort(), messages: r.violations.map((v) => v.pointer + ' ' + v.message), reader: ok.ok }));`;
    const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: scratch, encoding: 'utf8' });
    const result = JSON.parse(output) as { writer: string[]; messages: string[]; reader: boolean };
    expect(result.writer).toEqual(expect.arrayContaining(['/extra additionalProperties', '/orderId format', '/customerId required']));
    // The generated code carries no message text; the runtime writes ajv's.
    expect(result.messages).toContain('/orderId must match format "uuid"');
    expect(result.reader).toBe(false);
  });
});
