/**
 * prom-client is an optional peer of the runtime: only a service that serves `/metrics` installs
 * it (about 1 MB with its dependencies), so it is loaded when `createPrometheusMetrics` is first
 * called rather than when the runtime is imported. It is a CommonJS package, so `require` loads
 * it synchronously and `createPrometheusMetrics` stays synchronous.
 */
import { createRequire } from 'node:module';

type PromClient = typeof import('prom-client');

const require = createRequire(import.meta.url);

/** The version the runtime is tested with (the install hint names it). */
const PROM_CLIENT_VERSION = '15.1.3';

export function loadPromClient(): PromClient {
  try {
    return require('prom-client') as PromClient;
  } catch (error) {
    if ((error as { code?: string }).code === 'MODULE_NOT_FOUND') {
      throw new Error(
        `createPrometheusMetrics needs the 'prom-client' package: npm install --save-exact prom-client@${PROM_CLIENT_VERSION}`,
        { cause: error },
      );
    }
    throw error;
  }
}
