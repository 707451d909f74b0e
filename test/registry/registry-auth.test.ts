/**
 * Registry auth and TLS against the real registry, behind a real HTTPS reverse proxy that checks
 * credentials (test/support/registry/auth-proxy.ts: Apicurio 3.0.9 authenticates only through an
 * OIDC server, which this machine does not run). Basic auth and bearer tokens from the
 * environment, from the variables evgen.config.json names, and from the URL; a custom CA; 401 and
 * 403 answers are one clear problem and exit 2, never a secret in what is printed, nothing
 * registered; the runtime's schema ids go through the same client.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createSchemaIds, SchemaRegistryError } from 'evgen/runtime';
import { runCliCaptured, type CliResult } from '../cli/capture-output.js';
import { startAuthProxy, type AuthProxy } from '../support/registry/auth-proxy.js';
import { useRegistryTests, type RegistryProject } from '../support/registry/registry-tests.js';

const PASSWORD = 'pa55-w0rd-s3cret';
const TOKEN = 'tok-0123456789abcdef';
const READ_ONLY_TOKEN = 'tok-readonly-fedcba987';
const SECRETS = [PASSWORD, TOKEN, READ_ONLY_TOKEN, encodeURIComponent(PASSWORD)];

const tests = useRegistryTests();
let proxy: AuthProxy;

beforeAll(async () => {
  proxy = await startAuthProxy({
    target: tests.registry.url,
    identities: [
      { basic: { username: 'orders-ci', password: PASSWORD } },
      { token: TOKEN },
      { token: READ_ONLY_TOKEN, readOnly: true },
    ],
  });
});

afterAll(async () => {
  await proxy.close();
});

afterEach(() => {
  vi.unstubAllEnvs();
});

function env(values: Record<string, string>): void {
  for (const name of [
    'EVGEN_REGISTRY_URL',
    'EVGEN_REGISTRY_USERNAME',
    'EVGEN_REGISTRY_PASSWORD',
    'EVGEN_REGISTRY_TOKEN',
    'EVGEN_REGISTRY_CA_FILE',
  ])
    vi.stubEnv(name, values[name] ?? '');
  vi.stubEnv('EVGEN_REGISTRY_RETRIES', '0');
}

/** `evgen registry <command>` on the project's events, through the proxy (or `url`). */
function viaProxy(project: RegistryProject, command: string, url = proxy.url, ...args: string[]) {
  return runCliCaptured(
    'registry',
    command,
    ...args,
    '--events',
    project.events,
    '--registry',
    url,
  );
}

function expectNoSecret(result: CliResult): void {
  for (const secret of SECRETS) {
    expect(result.stdout).not.toContain(secret);
    expect(result.stderr).not.toContain(secret);
  }
  expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
}

describe('registry auth and TLS (HTTPS proxy with credentials in front of the real registry)', () => {
  it('basic auth from the environment and the CA file: push registers through the proxy; a bearer token pulls it back', async () => {
    const project = await tests.project();
    env({
      EVGEN_REGISTRY_USERNAME: 'orders-ci',
      EVGEN_REGISTRY_PASSWORD: PASSWORD,
      EVGEN_REGISTRY_CA_FILE: proxy.caFile,
    });
    const push = await viaProxy(project, 'push');
    expect(push.stderr).toBe('');
    expect(push.code).toBe(0);
    expect(push.stdout).toContain(`pushed 2 subjects to ${proxy.url}`);
    expectNoSecret(push);
    expect(await tests.registry.client.versions(`${project.domain}.Placed`)).toEqual([1, 2]);

    env({ EVGEN_REGISTRY_TOKEN: READ_ONLY_TOKEN, EVGEN_REGISTRY_CA_FILE: proxy.caFile });
    const consumer = await tests.project(project.domain, {});
    const pull = await viaProxy(consumer, 'pull', proxy.url, `${project.domain}.Placed`);
    expect(pull.stderr).toBe('');
    expect(pull.code).toBe(0);
    expect(pull.stdout).toContain('pulled 1 events (2 versions)');
  });

  it('a wrong password: 401 is one problem (registry-unauthorized, exit 2), the password is not printed, nothing reaches the registry', async () => {
    const project = await tests.project();
    env({
      EVGEN_REGISTRY_USERNAME: 'orders-ci',
      EVGEN_REGISTRY_PASSWORD: `${PASSWORD}-wrong`,
      EVGEN_REGISTRY_CA_FILE: proxy.caFile,
    });
    const forwarded = proxy.stats.forwarded;
    const result = await viaProxy(project, 'push');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('registry-unauthorized');
    expect(result.stderr).toContain('refused the credentials (basic auth sent)');
    expect(result.stderr).toContain('401');
    expect(result.stderr).toContain('EVGEN_REGISTRY_USERNAME');
    expectNoSecret(result);
    expect(result.stderr).not.toContain(`${PASSWORD}-wrong`);
    expect(proxy.stats.forwarded).toBe(forwarded);
    expect(await tests.registry.client.versions(`${project.domain}.Placed`)).toBeUndefined();

    env({ EVGEN_REGISTRY_CA_FILE: proxy.caFile });
    const none = await viaProxy(project, 'push');
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('refused the credentials (none were sent)');
  });

  it('a read-only token pushing: 403 is one problem (exit 2), says the credentials may not do this, the token is not printed, nothing registered', async () => {
    const project = await tests.project();
    env({ EVGEN_REGISTRY_TOKEN: READ_ONLY_TOKEN, EVGEN_REGISTRY_CA_FILE: proxy.caFile });
    const result = await viaProxy(project, 'push');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('registry-unauthorized');
    expect(result.stderr).toContain('accepted the credentials but forbids this request');
    expect(result.stderr).toContain('403');
    expectNoSecret(result);
    expect(await tests.registry.client.versions(`${project.domain}.Placed`)).toBeUndefined();
  });

  it('TLS without the CA: the certificate is refused (registry-unreachable, exit 2) and the hint names the CA settings', async () => {
    const project = await tests.project();
    env({ EVGEN_REGISTRY_TOKEN: TOKEN });
    const requests = proxy.stats.requests;
    const result = await viaProxy(project, 'push');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('registry-unreachable');
    expect(result.stderr).toMatch(/self[- ]signed certificate|unable to verify/);
    expect(result.stderr).toContain('EVGEN_REGISTRY_CA_FILE');
    expectNoSecret(result);
    expect(proxy.stats.requests).toBe(requests); // the handshake failed: no request was made

    env({ EVGEN_REGISTRY_TOKEN: TOKEN, EVGEN_REGISTRY_CA_FILE: join(project.dir, 'missing.pem') });
    const missing = await viaProxy(project, 'push');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('cannot read EVGEN_REGISTRY_CA_FILE (ENOENT)');
  });

  it('credentials in the URL are basic auth and never printed: not in the plan, not in a 401', async () => {
    const project = await tests.project();
    env({ EVGEN_REGISTRY_CA_FILE: proxy.caFile });
    const withCredentials = (password: string) =>
      proxy.url.replace('https://', `https://orders-ci:${encodeURIComponent(password)}@`);
    const plan = await viaProxy(project, 'push', withCredentials(PASSWORD), '--dry-run');
    expect(plan.code).toBe(0);
    expect(plan.stdout).toContain(`plan for ${proxy.url} (dry run`);
    expectNoSecret(plan);

    const wrong = `${PASSWORD}-nope`;
    const refused = await viaProxy(project, 'push', withCredentials(wrong));
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('401');
    expect(refused.stderr).not.toContain(wrong);
    expectNoSecret(refused);
  });

  it('evgen.config.json names the token variable and the CA file; a URL with credentials there is refused', async () => {
    const project = await tests.project();
    await writeFile(
      join(project.dir, 'evgen.config.json'),
      JSON.stringify({
        registry: {
          url: proxy.url,
          caFile: proxy.caFile,
          auth: { bearer: { tokenEnv: 'ORDERS_REGISTRY_TOKEN' } },
        },
      }),
    );
    const config = ['--config', join(project.dir, 'evgen.config.json')];
    env({});
    const unset = await runCliCaptured('registry', 'push', ...config);
    expect(unset.code).toBe(2);
    expect(unset.stderr).toContain(
      'names ORDERS_REGISTRY_TOKEN for the bearer token, and it is not set',
    );

    vi.stubEnv('ORDERS_REGISTRY_TOKEN', TOKEN);
    const push = await runCliCaptured('registry', 'push', ...config);
    expect(push.stderr).toBe('');
    expect(push.code).toBe(0);
    expectNoSecret(push);
    expect(await tests.registry.client.versions(`${project.domain}.Shipped`)).toEqual([1]);

    await writeFile(
      join(project.dir, 'evgen.config.json'),
      JSON.stringify({
        registry: { url: proxy.url.replace('https://', `https://orders-ci:${PASSWORD}@`) },
      }),
    );
    const inFile = await runCliCaptured('registry', 'push', ...config);
    expect(inFile.code).toBe(2);
    expect(inFile.stderr).toContain('invalid-config');
    expect(inFile.stderr).toContain('/registry/url');
    expect(inFile.stderr).toContain('the URL carries no credentials');
  });

  it('the runtime resolves schema ids through the same auth and CA; a refused token is an unauthorized SchemaRegistryError without the token', async () => {
    const project = await tests.project();
    env({ EVGEN_REGISTRY_TOKEN: TOKEN, EVGEN_REGISTRY_CA_FILE: proxy.caFile });
    expect((await viaProxy(project, 'push')).code).toBe(0);
    const registered = (await tests.registry.client.version(`${project.domain}.Placed`, 2))!;

    const ids = createSchemaIds({
      registry: { url: proxy.url, auth: { token: TOKEN }, ca: proxy.ca, retries: 0 },
    });
    expect(await ids.idFor(`${project.domain}.Placed`, 2)).toBe(registered.id);

    const refused = createSchemaIds({
      registry: { url: proxy.url, auth: { token: `${TOKEN}x` }, ca: proxy.ca, retries: 0 },
    });
    const error = await refused.idFor(`${project.domain}.Placed`, 2).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SchemaRegistryError);
    expect((error as SchemaRegistryError).kind).toBe('unauthorized');
    expect((error as SchemaRegistryError).status).toBe(401);
    expect((error as Error).message).not.toContain(TOKEN);
  });
});
