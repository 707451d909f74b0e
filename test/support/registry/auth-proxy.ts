/**
 * A real HTTPS reverse proxy that checks credentials, in front of the real test registry.
 * Apicurio 3.0.9 authenticates only through an OIDC server (Keycloak), which this machine does not
 * run, so the registry's TLS and auth are put in front of it the way many deployments do (a
 * gateway or ingress terminating TLS and checking credentials): everything the proxy accepts is
 * forwarded byte for byte to Apicurio, and Apicurio's answer comes back unchanged.
 *
 * - TLS: a CA and a server certificate for 127.0.0.1, made with the openssl CLI in a scratch
 *   folder (`caFile` is the PEM a client must trust; nothing trusts it by default).
 * - Auth: `Authorization: Basic <user:password>` for the accounts given, or `Bearer <token>`.
 *   No or unknown credentials → 401 with `WWW-Authenticate`; a read-only identity sending
 *   anything but GET → 403. Bodies are Confluent-shaped (`error_code`, `message`).
 * - `requests` counts what reached the proxy, `forwarded` what reached the registry.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ProxyIdentity {
  /** `user:password` (basic) or a bearer token. */
  readonly basic?: { readonly username: string; readonly password: string };
  readonly token?: string;
  /** GET only; anything else answers 403. */
  readonly readOnly?: boolean;
}

export interface AuthProxyOptions {
  /** The registry's ccompat base, e.g. http://127.0.0.1:18080/apis/ccompat/v7. */
  readonly target: string;
  readonly identities: readonly ProxyIdentity[];
}

export interface AuthProxy {
  /** https://127.0.0.1:<port><the target's path>: the registry URL clients use. */
  readonly url: string;
  /** The PEM file of the CA that signed the proxy's certificate. */
  readonly caFile: string;
  readonly ca: Buffer;
  readonly stats: { requests: number; forwarded: number; refused: number };
  close(): Promise<void>;
}

function openssl(dir: string, ...args: string[]): void {
  const run = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
  if (run.error || run.status !== 0)
    throw new Error(
      `openssl ${args.join(' ')} failed (is the openssl CLI installed?): ${run.error?.message ?? run.stderr}`,
    );
}

/** A CA and a certificate it signed for 127.0.0.1 (and localhost), in `dir`. */
function makeCertificates(dir: string): void {
  openssl(
    dir,
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-subj',
    '/CN=evgen test registry CA',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
  );
  openssl(
    dir,
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/CN=127.0.0.1',
    '-keyout',
    'server.key',
    '-out',
    'server.csr',
  );
  openssl(
    dir,
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    'san.ext',
    '-out',
    'server.pem',
  );
}

function identityOf(
  header: string | undefined,
  identities: readonly ProxyIdentity[],
): ProxyIdentity | undefined {
  if (header === undefined) return undefined;
  const [scheme, value = ''] = header.split(' ', 2);
  if (scheme?.toLowerCase() === 'bearer') return identities.find((i) => i.token === value);
  if (scheme?.toLowerCase() !== 'basic') return undefined;
  const decoded = Buffer.from(value, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const username = decoded.slice(0, colon);
  const password = decoded.slice(colon + 1);
  return identities.find(
    (i) => i.basic?.username === username && i.basic.password === password && colon >= 0,
  );
}

function refuse(response: ServerResponse, status: 401 | 403, message: string): void {
  response.writeHead(status, {
    'content-type': 'application/json',
    ...(status === 401 ? { 'www-authenticate': 'Basic realm="registry", Bearer' } : {}),
  });
  response.end(JSON.stringify({ error_code: status === 401 ? 40101 : 40301, message }));
}

export async function startAuthProxy(options: AuthProxyOptions): Promise<AuthProxy> {
  const dir = await mkdtemp(join(tmpdir(), 'evgen-registry-tls-'));
  await writeFile(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  makeCertificates(dir);
  const ca = await readFile(join(dir, 'ca.pem'));
  const key = await readFile(join(dir, 'server.key'));
  const cert = await readFile(join(dir, 'server.pem'));
  const target = new URL(options.target);
  const stats = { requests: 0, forwarded: 0, refused: 0 };

  const server: Server = createServer({ key, cert }, (incoming, response) => {
    stats.requests++;
    const identity = identityOf(incoming.headers.authorization, options.identities);
    if (identity === undefined) {
      stats.refused++;
      refuse(response, 401, 'Unauthorized: missing or unknown credentials');
      return;
    }
    if (identity.readOnly === true && incoming.method !== 'GET') {
      stats.refused++;
      refuse(response, 403, `Forbidden: this identity may only read (${incoming.method})`);
      return;
    }
    stats.forwarded++;
    const { authorization: _dropped, host: _host, ...headers } = incoming.headers;
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        method: incoming.method,
        path: incoming.url,
        headers: { ...headers, host: target.host },
      },
      (answer: IncomingMessage) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    upstream.on('error', (error) => {
      response.writeHead(502, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error_code: 50201, message: error.message }));
    });
    incoming.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}${target.pathname.replace(/\/$/, '')}`,
    caFile: join(dir, 'ca.pem'),
    ca,
    stats,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
