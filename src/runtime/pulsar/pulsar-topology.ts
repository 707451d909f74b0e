/**
 * `ensurePulsarTopics`: creates the namespaces and topics the catalog declares through the
 * broker's admin REST API (`/admin/v2`), and never changes what exists. A topic that exists with
 * another partitioning (non-partitioned where the catalog says 4 partitions, or 2 where it says
 * 4) is reported as a conflict and left alone: repartitioning moves keys between partitions and
 * breaks per-aggregate order, so it is an operator's decision. Tenants are never created (they
 * carry the cluster's permissions and quotas); a missing one is an error naming it.
 */
import { parseTopicName, PulsarClientError } from './pulsar-client.js';
import { pulsarRouteTopic, type PulsarRoute } from './pulsar-publishing.js';

/**
 * The Pulsar topics a catalog implies (`pulsarTopology` in the generated `pulsar/topology.ts`):
 * each event topic with its declared partitions, and per consumer the topics of the events it
 * subscribes to (what a subscription is opened on).
 */
export interface PulsarTopology {
  /** One entry per topic; `partitions` only where the catalog declares them. */
  readonly topics: readonly PulsarRoute[];
  readonly consumers: readonly {
    readonly name: string;
    readonly subscriptions: readonly (PulsarRoute & { readonly eventType: string })[];
  }[];
}

export interface PulsarTopologyOptions {
  /** Prepended to every topic's local name; the relay and producers must use the same one. */
  readonly prefix?: string;
}

/**
 * `ensurePulsarTopics` for a generated topology: every event topic, with the deployment prefix.
 * Existing topics are never changed; one partitioned otherwise is in `conflicts`.
 */
export function ensurePulsarTopology(
  connection: PulsarAdminConnection,
  topology: PulsarTopology,
  options: PulsarTopologyOptions = {},
): Promise<EnsurePulsarTopicsResult> {
  return ensurePulsarTopics(
    connection,
    topology.topics.map((route) => ({
      topic: pulsarRouteTopic(route, options.prefix),
      ...(route.partitions !== undefined ? { partitions: route.partitions } : {}),
    })),
  );
}

/** A topic to ensure: its full name and, for a partitioned topic, the partition count. */
export interface PulsarTopicSpec {
  /** `persistent://<tenant>/<namespace>/<topic>` */
  readonly topic: string;
  /** Absent: non-partitioned. */
  readonly partitions?: number;
}

/** How to reach the admin API. */
export interface PulsarAdminConnection {
  /** The broker's HTTP base URL, e.g. `http://127.0.0.1:8080`. */
  readonly webServiceUrl: string;
  /** Extra request headers, e.g. `{ Authorization: 'Bearer <token>' }`. */
  readonly headers?: Readonly<Record<string, string>>;
  /** How long one admin request may take (default 30 000 ms). */
  readonly requestTimeoutMs?: number;
}

/** An existing topic whose partitioning differs from the declaration. */
export interface PulsarTopicConflict {
  readonly topic: string;
  /** 0 = non-partitioned. */
  readonly declared: number;
  readonly actual: number;
}

/** What `ensurePulsarTopics` did. */
export interface EnsurePulsarTopicsResult {
  readonly createdNamespaces: readonly string[];
  readonly createdTopics: readonly string[];
  /** Existing topics whose partitioning differs; nothing was changed on them. */
  readonly conflicts: readonly PulsarTopicConflict[];
}

/**
 * Creates missing namespaces and topics; reports (never alters) existing topics partitioned
 * otherwise than declared. Idempotent; two processes running it at once both succeed.
 */
export async function ensurePulsarTopics(
  connection: PulsarAdminConnection,
  specs: readonly PulsarTopicSpec[],
): Promise<EnsurePulsarTopicsResult> {
  const admin = pulsarAdmin(connection);
  const createdNamespaces: string[] = [];
  const createdTopics: string[] = [];
  const conflicts: PulsarTopicConflict[] = [];
  const namespaces = new Map<string, Set<string>>();
  for (const spec of specs) {
    const { domain, tenant, namespace, local } = parseTopicName(spec.topic);
    const ns = `${tenant}/${namespace}`;
    if (!namespaces.has(ns)) {
      const existing = await admin.get(`namespaces/${enc(tenant)}`);
      if (existing.status === 404 || existing.status === 403) {
        throw new PulsarClientError(
          `Pulsar tenant '${tenant}' does not exist (HTTP ${existing.status}); evgen never creates tenants: ask the cluster's operator to create it, or use the default tenant 'public'`,
          false,
        );
      }
      if (!(existing.body as string[]).includes(ns)) {
        const created = await admin.put(`namespaces/${enc(tenant)}/${enc(namespace)}`);
        if (created === 204) createdNamespaces.push(ns);
      }
      namespaces.set(ns, new Set());
    }
    const path = `${domain}/${enc(tenant)}/${enc(namespace)}/${enc(local)}`;
    const declared = spec.partitions ?? 0;
    const actual = await partitioningOf(admin, domain, tenant, namespace, local, path);
    if (actual === undefined) {
      const status =
        declared > 0
          ? await admin.put(`${path}/partitions`, declared)
          : await admin.put(path, undefined);
      if (status === 204) {
        createdTopics.push(spec.topic);
        continue;
      }
      // 409: created meanwhile by another process; compare what it made.
      const now = await partitioningOf(admin, domain, tenant, namespace, local, path);
      if (now !== undefined && now !== declared)
        conflicts.push({ topic: spec.topic, declared, actual: now });
      continue;
    }
    if (actual !== declared) conflicts.push({ topic: spec.topic, declared, actual });
  }
  return { createdNamespaces, createdTopics, conflicts };
}

/** Partition count of an existing topic (0 = non-partitioned), undefined when it does not exist. */
async function partitioningOf(
  admin: PulsarAdmin,
  domain: string,
  tenant: string,
  namespace: string,
  local: string,
  path: string,
): Promise<number | undefined> {
  const base = `${domain}/${enc(tenant)}/${enc(namespace)}`;
  const full = `${domain}://${tenant}/${namespace}/${local}`;
  const partitioned = await admin.get(`${base}/partitioned`);
  if ((partitioned.body as string[]).includes(full)) {
    const metadata = await admin.get(`${path}/partitions`);
    return (metadata.body as { partitions: number }).partitions;
  }
  const plain = await admin.get(base);
  return (plain.body as string[]).includes(full) ? 0 : undefined;
}

interface PulsarAdmin {
  /** GET; a 404 or 403 resolves with no body (the caller names what is missing). */
  get(path: string): Promise<{ status: number; body: unknown }>;
  /** PUT; resolves with 204 (created) or 409 (exists), throws otherwise. */
  put(path: string, body?: unknown): Promise<number>;
}

function pulsarAdmin(connection: PulsarAdminConnection): PulsarAdmin {
  const base = `${connection.webServiceUrl.replace(/\/+$/, '')}/admin/v2/`;
  const timeoutMs = connection.requestTimeoutMs ?? 30_000;
  const request = async (method: string, path: string, body?: unknown) => {
    try {
      return await fetch(base + path, {
        method,
        headers: {
          ...connection.headers,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw new PulsarClientError(
        `Pulsar admin ${method} ${base}${path} failed: ${(error as Error).message}`,
        true,
      );
    }
  };
  const refused = async (response: Response, method: string, path: string) =>
    new PulsarClientError(
      `Pulsar admin ${method} ${path}: HTTP ${response.status} ${(await response.text()).slice(0, 300)}`,
      response.status >= 500,
    );
  return {
    async get(path) {
      const response = await request('GET', path);
      if (response.status === 404 || response.status === 403) {
        return { status: response.status, body: undefined };
      }
      if (!response.ok) throw await refused(response, 'GET', path);
      return { status: response.status, body: await response.json() };
    },
    async put(path, body) {
      const response = await request('PUT', path, body);
      if (response.status === 204 || response.status === 409) return response.status;
      throw await refused(response, 'PUT', path);
    },
  };
}

const enc = encodeURIComponent;
