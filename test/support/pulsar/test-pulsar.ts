/**
 * Test access to the real Pulsar broker the global setup started. Every test works on topics of
 * its own (`evgen-t-<random>-…` in `public/default`) and deletes them (with their subscriptions)
 * afterwards; a broker that does not answer fails the test loudly, never skips it.
 */
import { randomBytes } from 'node:crypto';
import { pulsarAnswers, TEST_PULSAR_WEB_URL } from './broker.js';

export { TEST_PULSAR_WEB_URL };

export interface TestPulsar {
  readonly webUrl: string;
  /** A full topic name of this test (`persistent://public/default/evgen-t-<random>-<name>`), deleted at clean-up. */
  topic(name: string): string;
  /**
   * A namespace of this test, `evgen-t-<random>/<name>`, in a tenant of its own (created on first
   * use); namespace and tenant are deleted at clean-up with every topic in them.
   */
  namespace(name: string): Promise<string>;
  /** Calls the admin REST API (`/admin/v2/<path>`); throws on a status other than 2xx. */
  admin(method: string, path: string, body?: unknown): Promise<unknown>;
  cleanup(): Promise<void>;
}

export async function createTestPulsar(webUrl = TEST_PULSAR_WEB_URL): Promise<TestPulsar> {
  if (!(await pulsarAnswers(webUrl, 5_000))) {
    throw new Error(
      `Pulsar is not reachable at ${webUrl}: start it with npx tsx test/support/pulsar/start.ts`,
    );
  }
  const prefix = `evgen-t-${randomBytes(4).toString('hex')}-`;
  const topics = new Set<string>();
  const namespaces = new Set<string>();
  const tenant = prefix.slice(0, -1);
  let tenantCreated: Promise<unknown> | undefined;
  const admin = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${webUrl}/admin/v2/${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(20_000),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: HTTP ${response.status} ${text}`);
    return text.length > 0 ? (JSON.parse(text) as unknown) : undefined;
  };
  return {
    webUrl,
    topic(name) {
      const topic = `persistent://public/default/${prefix}${name}`;
      topics.add(topic);
      return topic;
    },
    async namespace(name) {
      // A tenant allowed on no cluster can hold no namespace: allow the broker's own.
      tenantCreated ??= admin('GET', 'clusters').then((clusters) =>
        admin('PUT', `tenants/${tenant}`, { adminRoles: [], allowedClusters: clusters }),
      );
      await tenantCreated;
      const namespace = `${tenant}/${name}`;
      namespaces.add(namespace);
      await admin('PUT', `namespaces/${namespace}`);
      return namespace;
    },
    admin,
    async cleanup() {
      for (const topic of topics) {
        const path = topic.replace('://', '/');
        // force: also when consumers are still connected; a topic never created is fine.
        await admin('DELETE', `${path}?force=true`).catch((error: unknown) => {
          if (!String(error).includes('HTTP 404')) throw error;
        });
      }
      for (const namespace of namespaces)
        await admin('DELETE', `namespaces/${namespace}?force=true`);
      if (tenantCreated !== undefined) await admin('DELETE', `tenants/${tenant}`);
    },
  };
}

export { waitFor } from '../wait-for.js';
