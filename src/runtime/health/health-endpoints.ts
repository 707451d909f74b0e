/**
 * `/livez`, `/readyz` (and `/metrics` when given) over the runners' `health()`, for Node's
 * `http`, Express and Fastify. The frameworks are typed structurally (what evgen calls on a
 * request, a response, a reply), so none of them is a dependency.
 *
 * - `/readyz`: 200 when every runner is ready, else 503; the JSON body holds each runner's
 *   health (status, reasons, facts). A consumer whose breaker is open or whose broker connection
 *   is being reopened, and a relay that cannot reach its broker or its database, are not ready;
 *   they become ready again by themselves.
 * - `/livez`: 200 while the process answers, whatever the broker and database do: a restart does
 *   not cure their outage (the runners reconnect by themselves), so an orchestrator must not kill
 *   the process for it. It reads only the runners' lifecycle states (no query, no I/O).
 */
import type { RunnerHealth } from '../delivery/runner-health.js';
import type { RunnerState } from '../delivery/runner-lifecycle.js';

/** A relay, a consumer runner or the in-process broker. */
export interface HealthCheckable {
  readonly state: RunnerState;
  health(): Promise<RunnerHealth>;
}

/** Something that serves the Prometheus text format (`createPrometheusMetrics(...)`). */
export interface MetricsSource {
  readonly contentType: string;
  text(): Promise<string>;
}

export interface HealthEndpointsOptions {
  /** The runners by the name the JSON body shows them under (e.g. `{ relay, inventory }`). */
  readonly runners: Readonly<Record<string, HealthCheckable>>;
  /** Serves `/metrics` too when given. */
  readonly metrics?: MetricsSource;
  /** Paths, when not `/livez`, `/readyz` and `/metrics`. */
  readonly paths?: {
    /** Liveness path (default `/livez`). */
    readonly live?: string;
    /** Readiness path (default `/readyz`). */
    readonly ready?: string;
    /** Metrics path (default `/metrics`). */
    readonly metrics?: string;
  };
}

export interface HealthResponse {
  readonly statusCode: 200 | 503;
  readonly contentType: string;
  readonly body: string;
}

/** What evgen reads of a Node `http` / Express request. */
export interface NodeRequestLike {
  readonly url?: string | undefined;
  readonly method?: string | undefined;
}

/** What evgen calls on a Node `http` / Express response. */
export interface NodeResponseLike {
  statusCode: number;
  setHeader(name: string, value: string): unknown;
  end(body?: string): unknown;
}

/** What evgen calls on a Fastify reply. */
export interface FastifyReplyLike {
  code(statusCode: number): FastifyReplyLike;
  header(name: string, value: string): FastifyReplyLike;
  send(payload?: string): unknown;
}

/** What evgen calls on a Fastify instance. */
export interface FastifyLike {
  get(
    path: string,
    handler: (request: unknown, reply: FastifyReplyLike) => Promise<unknown>,
  ): unknown;
}

export interface HealthEndpoints {
  liveness(): Promise<HealthResponse>;
  readiness(): Promise<HealthResponse>;
  /** `/metrics` (404 body when no metrics were given). */
  metrics(): Promise<HealthResponse>;
  /**
   * A Node `http` request listener that is also Express middleware: answers the health paths,
   * hands anything else to `next` (Express) or answers 404 (plain `http`).
   */
  readonly handle: (req: NodeRequestLike, res: NodeResponseLike, next?: () => void) => void;
  /** Registers the paths as GET routes on a Fastify instance. */
  register(app: FastifyLike): void;
}

const JSON_TYPE = 'application/json; charset=utf-8';

export function createHealthEndpoints(options: HealthEndpointsOptions): HealthEndpoints {
  const paths = {
    live: options.paths?.live ?? '/livez',
    ready: options.paths?.ready ?? '/readyz',
    metrics: options.paths?.metrics ?? '/metrics',
  };
  const entries = Object.entries(options.runners);

  async function liveness(): Promise<HealthResponse> {
    const runners = Object.fromEntries(
      entries.map(([name, runner]) => [name, { state: runner.state }]),
    );
    return json(200, { status: 'up', runners });
  }

  async function readiness(): Promise<HealthResponse> {
    const checks = await Promise.all(
      entries.map(async ([name, runner]) => [name, await runner.health()] as const),
    );
    const ready = checks.every(([, health]) => health.ready);
    return json(ready ? 200 : 503, {
      status: ready ? 'up' : 'down',
      runners: Object.fromEntries(checks),
    });
  }

  async function metrics(): Promise<HealthResponse> {
    if (options.metrics === undefined) return json(503, { status: 'no metrics configured' });
    return {
      statusCode: 200,
      contentType: options.metrics.contentType,
      body: await options.metrics.text(),
    };
  }

  function route(path: string): (() => Promise<HealthResponse>) | undefined {
    if (path === paths.live) return liveness;
    if (path === paths.ready) return readiness;
    if (path === paths.metrics && options.metrics !== undefined) return metrics;
    return undefined;
  }

  function handle(req: NodeRequestLike, res: NodeResponseLike, next?: () => void): void {
    const path = (req.url ?? '/').split('?')[0]!;
    const answer =
      req.method === undefined || req.method === 'GET' || req.method === 'HEAD'
        ? route(path)
        : undefined;
    if (answer === undefined) {
      if (next !== undefined) {
        next();
        return;
      }
      res.statusCode = 404;
      res.setHeader('content-type', JSON_TYPE);
      res.end(JSON.stringify({ status: 'not found', path }));
      return;
    }
    void answer().then(
      (response) => {
        res.statusCode = response.statusCode;
        res.setHeader('content-type', response.contentType);
        res.setHeader('cache-control', 'no-store');
        res.end(req.method === 'HEAD' ? undefined : response.body);
      },
      (error: unknown) => {
        res.statusCode = 503;
        res.setHeader('content-type', JSON_TYPE);
        res.end(
          JSON.stringify({ status: 'down', error: String((error as Error)?.message ?? error) }),
        );
      },
    );
  }

  function register(app: FastifyLike): void {
    const routes: [string, () => Promise<HealthResponse>][] = [
      [paths.live, liveness],
      [paths.ready, readiness],
    ];
    if (options.metrics !== undefined) routes.push([paths.metrics, metrics]);
    for (const [path, answer] of routes) {
      app.get(path, async (_request, reply) => {
        const response = await answer();
        return reply
          .code(response.statusCode)
          .header('content-type', response.contentType)
          .header('cache-control', 'no-store')
          .send(response.body);
      });
    }
  }

  return { liveness, readiness, metrics, handle, register };
}

function json(statusCode: 200 | 503, body: unknown): HealthResponse {
  return { statusCode, contentType: JSON_TYPE, body: `${JSON.stringify(body)}\n` };
}
