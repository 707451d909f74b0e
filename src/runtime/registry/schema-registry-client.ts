/**
 * A small client of the Confluent Schema Registry REST API (any registry that speaks it:
 * Confluent, Apicurio's `ccompat/v7`, Karapace, Redpanda). Only what evgen uses: subjects and
 * their versions, registering, per-subject compatibility levels, compatibility tests and schema
 * lookups by id. JSON schemas only.
 *
 * Connection: basic auth or a bearer token, TLS with an extra CA, a timeout per request, and
 * retries (with a short backoff) of what may pass: no connection, a timeout, 502/503/504.
 * Every failure is a SchemaRegistryError saying what happened and where.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { SchemaRegistryError } from './schema-registry-error.js';

export type SchemaRegistryAuth =
  { readonly username: string; readonly password: string } | { readonly token: string };

export interface SchemaRegistryOptions {
  /** Base URL of the Confluent API, e.g. `http://localhost:8081` or `…/apis/ccompat/v7`. */
  readonly url: string;
  /** Basic auth (`username`, `password`) or a bearer `token`, sent with every request (default none). */
  readonly auth?: SchemaRegistryAuth;
  /** Extra trusted CA certificates (PEM) for an https URL. */
  readonly ca?: string | Buffer;
  /** Per request, ms (default 10 000). */
  readonly timeoutMs?: number;
  /** Retries of a request that got no answer or a 502/503/504 (default 2). */
  readonly retries?: number;
  /** Backoff before the first retry, doubled each time (default 200 ms). */
  readonly retryDelayMs?: number;
}

/** One registered version of a subject. */
export interface SubjectVersion {
  readonly subject: string;
  readonly version: number;
  readonly id: number;
  /** The schema text exactly as registered. */
  readonly schema: string;
}

export interface SchemaRegistryClient {
  readonly url: string;
  /** Every subject (not the soft-deleted ones). */
  subjects(): Promise<string[]>;
  /** Version numbers of a subject, ascending; undefined when the subject does not exist. */
  versions(subject: string): Promise<number[] | undefined>;
  /** One version of a subject; undefined when there is no such subject or version. */
  version(subject: string, version: number | 'latest'): Promise<SubjectVersion | undefined>;
  /** Registers a JSON schema under a subject (idempotent: the same text keeps its id); its id. */
  register(subject: string, schema: string): Promise<number>;
  /** Sets a subject's compatibility level. */
  setLevel(subject: string, level: string): Promise<void>;
  /** The registry's verdict on a schema against a subject's versions, per the subject's level. */
  testCompatibility(subject: string, schema: string): Promise<boolean>;
  /** The schema text of an id; undefined when the registry has no such id. */
  schemaById(id: number): Promise<string | undefined>;
  /** Deletes a subject (soft, or for good with `permanent`, which needs a soft delete first). */
  deleteSubject(subject: string, permanent?: boolean): Promise<void>;
}

const CONTENT_TYPE = 'application/vnd.schemaregistry.v1+json';
const RETRY_STATUSES = new Set([502, 503, 504]);

interface Answer {
  readonly status: number;
  readonly body: unknown;
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function createSchemaRegistryClient(options: SchemaRegistryOptions): SchemaRegistryClient {
  let base: URL;
  try {
    base = new URL(options.url.endsWith('/') ? options.url : `${options.url}/`);
  } catch {
    throw new SchemaRegistryError(
      'invalid',
      `schema registry URL '${options.url.replace(/(\/\/[^/\s:@]*:)[^@\s/]*@/, '$1***@')}' is not a URL`,
    );
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:')
    throw new SchemaRegistryError(
      'invalid',
      `schema registry URL '${base.protocol}//${base.host}${base.pathname}' must start with http:// or https://`,
    );
  // Credentials in the URL (`https://key:secret@host`, as Confluent Cloud examples write it) are
  // basic auth; they leave the URL, so no message, log or `url` ever shows them.
  const fromUrl =
    base.username !== '' || base.password !== ''
      ? {
          username: decodeURIComponent(base.username),
          password: decodeURIComponent(base.password),
        }
      : undefined;
  if (fromUrl !== undefined && options.auth !== undefined)
    throw new SchemaRegistryError(
      'invalid',
      'the schema registry URL carries credentials and `auth` is given too: give one of them',
    );
  base.username = '';
  base.password = '';
  const auth = options.auth ?? fromUrl;
  const url = base.href.replace(/\/$/, '');
  const timeoutMs = options.timeoutMs ?? 10_000;
  const retries = options.retries ?? 2;
  const retryDelayMs = options.retryDelayMs ?? 200;
  const authorization =
    auth === undefined
      ? undefined
      : 'token' in auth
        ? `Bearer ${auth.token}`
        : `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
  // Every secret, in every form it could come back in (a registry or proxy echoing the header):
  // taken out of each message before it leaves the client.
  const secrets = [
    ...(auth === undefined
      ? []
      : 'token' in auth
        ? [auth.token]
        : [auth.password, encodeURIComponent(auth.password)]),
    ...(authorization !== undefined ? [authorization.slice(authorization.indexOf(' ') + 1)] : []),
  ].filter((secret) => secret.length > 0);
  const redact = (text: string): string =>
    secrets.reduce((out, secret) => out.split(secret).join('***'), text);
  const registryError = (...args: ConstructorParameters<typeof SchemaRegistryError>) => {
    const [kind, message, ...rest] = args;
    return new SchemaRegistryError(kind, redact(message), ...rest);
  };

  function once(method: string, path: string, body: unknown): Promise<Answer> {
    const target = new URL(path, base);
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body), 'utf8');
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<Answer>((resolve, reject) => {
      const req = send(
        target,
        {
          method,
          headers: {
            accept: `${CONTENT_TYPE}, application/json`,
            ...(payload !== undefined
              ? { 'content-type': CONTENT_TYPE, 'content-length': payload.length }
              : {}),
            ...(authorization !== undefined ? { authorization } : {}),
          },
          ...(options.ca !== undefined ? { ca: options.ca } : {}),
          timeout: timeoutMs,
        },
        (response: IncomingMessage) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('error', reject);
          response.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: unknown = text;
            try {
              parsed = text === '' ? undefined : JSON.parse(text);
            } catch {
              // not JSON: kept as text for the message
            }
            resolve({ status: response.statusCode ?? 0, body: parsed });
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms (timeout)`)));
      req.on('error', reject);
      req.end(payload);
    });
  }

  async function call(method: string, path: string, body?: unknown): Promise<Answer> {
    const where = `${method} ${url}/${path}`;
    for (let attempt = 0; ; attempt++) {
      let answer: Answer;
      try {
        answer = await once(method, path, body);
      } catch (error) {
        if (attempt < retries) {
          await delay(retryDelayMs * 2 ** attempt);
          continue;
        }
        throw registryError(
          'unreachable',
          `schema registry unreachable: ${where}: ${(error as Error).message} (tried ${attempt + 1} times)`,
          undefined,
          undefined,
          { cause: error },
        );
      }
      if (RETRY_STATUSES.has(answer.status) && attempt < retries) {
        await delay(retryDelayMs * 2 ** attempt);
        continue;
      }
      return answer;
    }
  }

  function failure(method: string, path: string, answer: Answer): SchemaRegistryError {
    const where = `${method} ${url}/${path}`;
    const body = answer.body as { message?: unknown; error_code?: unknown } | undefined;
    const said =
      typeof body === 'object' && body !== null && typeof body.message === 'string'
        ? body.message
        : typeof answer.body === 'string'
          ? answer.body.slice(0, 300)
          : '';
    const errorCode = typeof body?.error_code === 'number' ? body.error_code : undefined;
    const detail = `${answer.status}${errorCode !== undefined ? ` (error code ${errorCode})` : ''}${said !== '' ? `: ${said}` : ''}`;
    switch (answer.status) {
      case 401:
        return registryError(
          'unauthorized',
          `schema registry refused the credentials (${authorization === undefined ? 'none were sent' : `${authorization.split(' ')[0]!.toLowerCase()} auth sent`}): ${where} answered ${detail}`,
          answer.status,
          errorCode,
        );
      case 403:
        return registryError(
          'unauthorized',
          `schema registry accepted the credentials but forbids this request: ${where} answered ${detail}`,
          answer.status,
          errorCode,
        );
      case 404:
        return registryError('not-found', `${where} answered ${detail}`, 404, errorCode);
      case 409:
        return registryError(
          'incompatible',
          `schema registry refused the schema as incompatible: ${where} answered ${detail}`,
          409,
          errorCode,
        );
      case 422:
        return registryError(
          'invalid',
          `schema registry refused the request as invalid: ${where} answered ${detail}`,
          422,
          errorCode,
        );
      default:
        return registryError(
          'server',
          `schema registry failed: ${where} answered ${detail}`,
          answer.status,
          errorCode,
        );
    }
  }

  async function json(method: string, path: string, body?: unknown): Promise<unknown> {
    const answer = await call(method, path, body);
    if (answer.status >= 200 && answer.status < 300) return answer.body;
    throw failure(method, path, answer);
  }

  /** Like `json`, but a 404 is `undefined`. */
  async function optional(method: string, path: string): Promise<unknown> {
    const answer = await call(method, path);
    if (answer.status === 404) return undefined;
    if (answer.status >= 200 && answer.status < 300) return answer.body;
    throw failure(method, path, answer);
  }

  const unexpected = (path: string, body: unknown) =>
    registryError(
      'server',
      `schema registry answered ${url}/${path} with an unexpected body: ${JSON.stringify(body)?.slice(0, 200)}`,
    );
  const s = encodeURIComponent;

  return {
    url,
    async subjects() {
      const body = await json('GET', 'subjects');
      if (!Array.isArray(body) || !body.every((item) => typeof item === 'string'))
        throw unexpected('subjects', body);
      return [...body];
    },
    async versions(subject) {
      const path = `subjects/${s(subject)}/versions`;
      const body = await optional('GET', path);
      if (body === undefined) return undefined;
      if (!Array.isArray(body) || !body.every((item) => Number.isInteger(item)))
        throw unexpected(path, body);
      return (body as number[]).sort((a, b) => a - b);
    },
    async version(subject, version) {
      const path = `subjects/${s(subject)}/versions/${version}`;
      const body = (await optional('GET', path)) as Partial<SubjectVersion> | undefined;
      if (body === undefined) return undefined;
      if (typeof body.id !== 'number' || typeof body.schema !== 'string')
        throw unexpected(path, body);
      return {
        subject,
        version: typeof body.version === 'number' ? body.version : Number(version),
        id: body.id,
        schema: body.schema,
      };
    },
    async register(subject, schema) {
      const path = `subjects/${s(subject)}/versions`;
      const body = (await json('POST', path, { schemaType: 'JSON', schema })) as { id?: unknown };
      if (typeof body?.id !== 'number') throw unexpected(path, body);
      return body.id;
    },
    async setLevel(subject, level) {
      await json('PUT', `config/${s(subject)}`, { compatibility: level });
    },
    async testCompatibility(subject, schema) {
      const path = `compatibility/subjects/${s(subject)}/versions`;
      const body = (await json('POST', path, { schemaType: 'JSON', schema })) as {
        is_compatible?: unknown;
      };
      if (typeof body?.is_compatible !== 'boolean') throw unexpected(path, body);
      return body.is_compatible;
    },
    async schemaById(id) {
      const path = `schemas/ids/${id}`;
      const body = (await optional('GET', path)) as { schema?: unknown } | undefined;
      if (body === undefined) return undefined;
      if (typeof body.schema !== 'string') throw unexpected(path, body);
      return body.schema;
    },
    async deleteSubject(subject, permanent = false) {
      await json('DELETE', `subjects/${s(subject)}${permanent ? '?permanent=true' : ''}`);
    },
  };
}
