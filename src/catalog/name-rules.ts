/**
 * Which domain and event names are safe to turn into TypeScript identifiers and paths, and which
 * generated names two events would share. Collisions are reported, never renamed.
 */
import { camelCase, eventModuleDir, eventNames, versionNames } from '../common/naming.js';

export const DOMAIN_NAME = /^[a-z][a-z0-9-]*$/;
export const EVENT_NAME = /^[A-Z][A-Za-z0-9]*$/;
export const CONSUMER_NAME = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;

/**
 * Globals and built-in types that generated code must not shadow. An event named `Promise` or
 * `Record` would make every generated file that mentions the real one silently wrong.
 */
const GLOBAL_NAMES = new Set([
  'AggregateError',
  'Array',
  'ArrayBuffer',
  'ArrayLike',
  'AsyncGenerator',
  'AsyncIterable',
  'AsyncIterator',
  'Atomics',
  'Awaited',
  'BigInt',
  'BigInt64Array',
  'BigUint64Array',
  'Boolean',
  'Buffer',
  'Capitalize',
  'ConstructorParameters',
  'DataView',
  'Date',
  'Error',
  'EvalError',
  'Exclude',
  'Extract',
  'FinalizationRegistry',
  'Float32Array',
  'Float64Array',
  'Function',
  'Generator',
  'Infinity',
  'InstanceType',
  'Int16Array',
  'Int32Array',
  'Int8Array',
  'Intl',
  'Iterable',
  'Iterator',
  'JSON',
  'Lowercase',
  'Map',
  'Math',
  'NaN',
  'NonNullable',
  'Number',
  'Object',
  'Omit',
  'Parameters',
  'Partial',
  'Pick',
  'Promise',
  'PromiseLike',
  'Proxy',
  'RangeError',
  'Readonly',
  'ReadonlyArray',
  'ReadonlyMap',
  'ReadonlySet',
  'Record',
  'ReferenceError',
  'Reflect',
  'RegExp',
  'Required',
  'ReturnType',
  'Set',
  'SharedArrayBuffer',
  'String',
  'Symbol',
  'SyntaxError',
  'TypeError',
  'URIError',
  'URL',
  'URLSearchParams',
  'Uint16Array',
  'Uint32Array',
  'Uint8Array',
  'Uint8ClampedArray',
  'Uncapitalize',
  'Uppercase',
  'WeakMap',
  'WeakRef',
  'WeakSet',
  'globalThis',
  'undefined',
]);

/** JavaScript/TypeScript reserved words: a domain becomes a camelCase namespace name. */
const RESERVED_WORDS = new Set([
  'abstract',
  'any',
  'arguments',
  'as',
  'async',
  'await',
  'boolean',
  'break',
  'case',
  'catch',
  'class',
  'const',
  'constructor',
  'continue',
  'debugger',
  'declare',
  'default',
  'delete',
  'do',
  'else',
  'enum',
  'eval',
  'export',
  'extends',
  'false',
  'finally',
  'for',
  'from',
  'function',
  'get',
  'if',
  'implements',
  'import',
  'in',
  'infer',
  'instanceof',
  'interface',
  'is',
  'keyof',
  'let',
  'module',
  'namespace',
  'never',
  'new',
  'null',
  'number',
  'object',
  'of',
  'package',
  'private',
  'protected',
  'prototype',
  'public',
  'readonly',
  'require',
  'return',
  'set',
  'static',
  'string',
  'super',
  'switch',
  'symbol',
  'this',
  'throw',
  'true',
  'try',
  'type',
  'typeof',
  'undefined',
  'unique',
  'unknown',
  'var',
  'void',
  'while',
  'with',
  'yield',
]);

/** Why a name is refused, or undefined when it is fine. */
export function reservedEventName(name: string): string | undefined {
  return GLOBAL_NAMES.has(name) ? `"${name}" is a JavaScript/TypeScript global` : undefined;
}

export function reservedDomainName(domain: string): string | undefined {
  const identifier = camelCase(domain);
  return RESERVED_WORDS.has(identifier) || RESERVED_WORDS.has(domain)
    ? `"${domain}" is a JavaScript/TypeScript reserved word`
    : undefined;
}

/** Every TypeScript name and module folder generated for one event. */
export function generatedNames(
  event: { domain: string; name: string },
  versions: readonly number[],
): string[] {
  const names = new Set<string>([
    ...Object.values(eventNames(event)),
    `module:${eventModuleDir(event)}`,
  ]);
  for (const version of versions)
    for (const name of Object.values(versionNames(event, version))) names.add(name);
  return [...names].sort();
}
