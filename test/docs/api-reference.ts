/**
 * docs/reference/api/<entry>.md: every exported name of a package entry point (the names the API
 * report pins in api-report/*.txt), with its kind, signature and doc comment, and for options and
 * other object types every member — including members of types the entry does not export, such
 * as the relay's `hooks` — so an option exists in the reference exactly when it exists in the
 * `.d.ts` a service compiles against.
 */
import { basename, join } from 'node:path';
import ts from 'typescript';
import { API_ENTRIES, exportedNames } from '../package/api-entries.js';
import { REPO } from '../package/packed-install.js';
import { anchor, cell, codeCell } from './markdown-text.js';

export type ApiEntry = (typeof API_ENTRIES)[number];

/** The page of an entry, relative to the repository. */
export function apiPage(entry: ApiEntry): string {
  return `docs/reference/api/${basename(entry.report, '.txt')}.md`;
}

// Flags combine into a number; TypeScript's API takes them as the enum.
const FORMAT = (ts.TypeFormatFlags.NoTruncation |
  ts.TypeFormatFlags.UseSingleQuotesForStringLiteralType |
  ts.TypeFormatFlags.WriteArrowStyleSignature) as ts.TypeFormatFlags;
/** Declarations (`name(args): result`), not arrow types. */
const SIGNATURE_FORMAT = (FORMAT &
  ~ts.TypeFormatFlags.WriteArrowStyleSignature) as ts.TypeFormatFlags;
const ALIAS_FORMAT = (FORMAT | ts.TypeFormatFlags.InTypeAlias) as ts.TypeFormatFlags;

function docOf(symbol: ts.Symbol, checker: ts.TypeChecker): string {
  const text = ts.displayPartsToString(symbol.getDocumentationComment(checker)).trim();
  const tags = symbol
    .getJsDocTags(checker)
    .filter((tag) => tag.name === 'deprecated')
    .map(
      (tag) =>
        `Deprecated${tag.text === undefined ? '' : `: ${ts.displayPartsToString(tag.text)}`}.`,
    );
  return [text, ...tags].filter((part) => part !== '').join(' ');
}

function kindOf(symbol: ts.Symbol): string {
  const flags = symbol.flags;
  if (flags & ts.SymbolFlags.Class) return 'class';
  if (flags & ts.SymbolFlags.Function) return 'function';
  if (flags & ts.SymbolFlags.Interface) return 'interface';
  if (flags & ts.SymbolFlags.TypeAlias) return 'type';
  if (flags & ts.SymbolFlags.Variable) return 'constant';
  if (flags & ts.SymbolFlags.Enum) return 'enum';
  return 'name';
}

/** Whether a member's type is an object type worth listing member by member (options, hooks). */
function expandable(type: ts.Type, exported: ReadonlySet<string>): boolean {
  const target = type.getNonNullableType();
  if (!(target.flags & ts.TypeFlags.Object)) return false;
  const symbol = target.aliasSymbol ?? target.getSymbol();
  if (symbol === undefined) return false;
  if (exported.has(symbol.name)) return false; // has its own section
  if (target.getCallSignatures().length > 0) return false;
  const declaration = symbol.declarations?.[0];
  if (declaration === undefined) return false;
  // Only evgen's own types: a library's (pg's Pool, amqplib's ChannelModel) is documented there.
  if (declaration.getSourceFile().fileName.includes('node_modules')) return false;
  return ts.isInterfaceDeclaration(declaration) || ts.isTypeLiteralNode(declaration);
}

/**
 * A member keyed by a unique symbol has an internal name with a checker-wide counter in it
 * (`__@transactionBrand@2175`) that moves whenever any export changes; show it as written.
 */
function memberName(member: ts.Symbol, declaration: ts.Declaration): string {
  const name = ts.getNameOfDeclaration(declaration);
  if (name !== undefined && ts.isComputedPropertyName(name))
    return `[${name.expression.getText()}]`;
  return member.name;
}

function memberRows(
  type: ts.Type,
  prefix: string,
  checker: ts.TypeChecker,
  exported: ReadonlySet<string>,
  out: string[],
  depth: number,
): void {
  for (const member of checker.getPropertiesOfType(type)) {
    const declaration = member.valueDeclaration ?? member.declarations?.[0];
    if (declaration === undefined) continue;
    const modifiers = ts.getCombinedModifierFlags(declaration);
    if (modifiers & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) continue;
    if (member.name.startsWith('#')) continue;
    // Error's own name, message, stack and cause are TypeScript's lib, not evgen's API.
    if (declaration.getSourceFile().fileName.includes('node_modules')) continue;
    const name = memberName(member, declaration);
    const memberType = checker.getTypeOfSymbolAtLocation(member, declaration);
    const optional = member.flags & ts.SymbolFlags.Optional ? '?' : '';
    const shown =
      ts.isMethodDeclaration(declaration) || ts.isMethodSignature(declaration)
        ? checker
            .getSignaturesOfType(memberType.getNonNullableType(), ts.SignatureKind.Call)
            .map((signature) => checker.signatureToString(signature, undefined, FORMAT))
            .join('; ')
        : checker.typeToString(memberType, undefined, FORMAT);
    out.push(
      `| \`${prefix}${name}${optional}\` | ${codeCell(shown)} | ${cell(docOf(member, checker))} |`,
    );
    if (depth < 2 && expandable(memberType, exported)) {
      memberRows(
        memberType.getNonNullableType(),
        `${prefix}${name}.`,
        checker,
        exported,
        out,
        depth + 1,
      );
    }
  }
}

function renderName(
  symbol: ts.Symbol,
  checker: ts.TypeChecker,
  exported: ReadonlySet<string>,
): string[] {
  const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
  const kind = kindOf(target);
  const out = [
    `### \`${symbol.name}\``,
    '',
    `*${kind}*${docOf(target, checker) === '' ? '' : ` — ${docOf(target, checker)}`}`,
    '',
  ];
  const declaration = target.valueDeclaration ?? target.declarations?.[0];
  if (declaration === undefined) return out;
  const code: string[] = [];
  let members: ts.Type | undefined;
  if (kind === 'function') {
    const type = checker.getTypeOfSymbolAtLocation(target, declaration);
    for (const signature of type.getCallSignatures()) {
      code.push(
        `${symbol.name}${checker.signatureToString(signature, undefined, SIGNATURE_FORMAT)}`,
      );
    }
  } else if (kind === 'class') {
    const type = checker.getTypeOfSymbolAtLocation(target, declaration);
    for (const signature of type.getConstructSignatures()) {
      code.push(
        `new ${symbol.name}${checker.signatureToString(signature, undefined, SIGNATURE_FORMAT)}`,
      );
    }
    members = checker.getDeclaredTypeOfSymbol(target);
  } else if (kind === 'interface') {
    members = checker.getDeclaredTypeOfSymbol(target);
  } else if (kind === 'type') {
    const type = checker.getDeclaredTypeOfSymbol(target);
    code.push(`type ${symbol.name} = ${checker.typeToString(type, undefined, ALIAS_FORMAT)}`);
    if (
      type.flags & ts.TypeFlags.Object &&
      checker.getPropertiesOfType(type).length > 0 &&
      type.getCallSignatures().length === 0
    ) {
      members = type;
    }
  } else if (kind === 'constant') {
    code.push(
      `const ${symbol.name}: ${checker.typeToString(checker.getTypeOfSymbolAtLocation(target, declaration), undefined, FORMAT)}`,
    );
  }
  if (code.length > 0) out.push('```ts', ...code, '```', '');
  if (members !== undefined) {
    const rows: string[] = [];
    memberRows(members, '', checker, exported, rows, 0);
    if (rows.length > 0)
      out.push('| member | type | description |', '| --- | --- | --- |', ...rows, '');
  }
  return out;
}

/** Each name's heading anchor as GitHub makes it (a repeated anchor gets `-1`, `-2`, …). */
function headingAnchors(names: readonly string[]): { name: string; id: string }[] {
  const seen = new Map<string, number>();
  return names.map((name) => {
    const base = anchor(name);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    return { name, id: count === 0 ? base : `${base}-${count}` };
  });
}

/** Members of object types in the reference that have no doc comment, as `Type.member`. */
export function undocumentedMembers(entry: ApiEntry, program: ts.Program): string[] {
  const text = renderApiReference(entry, program);
  const missing: string[] = [];
  let current = '';
  for (const line of text.split('\n')) {
    const heading = /^### `(.+)`$/.exec(line);
    if (heading !== null) current = heading[1]!;
    const row = /^\| `([^`]+)` \| .* \| {2}\|$/.exec(line);
    if (row !== null) missing.push(`${current}.${row[1]!.replace(/\?$/, '')}`);
  }
  return missing;
}

export function renderApiReference(entry: ApiEntry, program: ts.Program): string {
  const checker = program.getTypeChecker();
  const file = program.getSourceFile(join(REPO, entry.source));
  const module = file === undefined ? undefined : checker.getSymbolAtLocation(file);
  if (module === undefined) throw new Error(`${entry.source}: not part of the program`);
  const names = exportedNames(program, entry.source).map((line) => line.split('\t')[0]!);
  const exported = new Set(names);
  const symbols = new Map(
    checker.getExportsOfModule(module).map((symbol) => [symbol.name, symbol]),
  );
  const out = [
    `# \`${entry.name}\` API reference`,
    '',
    `<!-- Generated from ${entry.source} (the names of ${entry.report}) by test/docs/api-reference.ts; do not edit.`,
    '     Rewrite with: EVGEN_UPDATE=1 npx vitest run test/docs/reference-docs.test.ts -->',
    '',
    `Every name \`${entry.name}\` exports (${names.length}), in alphabetical order, with the doc comment`,
    'of its declaration; object types list every member, and members whose type the entry does not',
    'export (hooks, nested options) are listed as `member.child`. The overview with one line per name',
    'is [the public API](../runtime.md).',
    '',
    headingAnchors(names)
      .map(({ name, id }) => `[\`${name}\`](#${id})`)
      .join(' · '),
    '',
  ];
  for (const name of names) out.push(...renderName(symbols.get(name)!, checker, exported));
  return `${out.join('\n').trimEnd()}\n`;
}
