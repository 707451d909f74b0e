/**
 * What went wrong talking to a schema registry, in words a user can act on. `kind` is what the
 * CLI and the runtime route on; `status` / `errorCode` are the registry's own answer, kept for
 * the message.
 */
import { EvgenError } from '../errors.js';

export type SchemaRegistryErrorKind =
  /** No connection (refused, DNS, TLS handshake) or no answer within the timeout. */
  | 'unreachable'
  /** 401, or 403: the credentials were missing or refused. */
  | 'unauthorized'
  /** 404: no such subject, version or schema id. */
  | 'not-found'
  /** 409: the registry refused a schema as incompatible with the subject's level. */
  | 'incompatible'
  /** 422: the registry refused the schema or the request as invalid. */
  | 'invalid'
  /** Any other answer (5xx, an unexpected body). */
  | 'server';

export class SchemaRegistryError extends EvgenError {
  readonly code = 'SchemaRegistryError';
  /** An unreachable or failing registry may answer later; a refusal will not change by retrying. */
  readonly retryable: boolean;
  /** The relay and consumers count this as an outage (attempts are kept), not as a bad message. */
  readonly unavailable: boolean;
  constructor(
    readonly kind: SchemaRegistryErrorKind,
    message: string,
    readonly status?: number,
    readonly errorCode?: number,
    options?: { cause?: unknown; readonly outage?: boolean },
  ) {
    super(message, options);
    this.name = 'SchemaRegistryError';
    // `outage`: a refusal that a change elsewhere fixes (a schema not pushed yet), so a producer
    // keeps its rows and tries again instead of giving them up.
    const outage = options?.outage ?? false;
    this.retryable = outage || kind === 'unreachable' || kind === 'server';
    this.unavailable =
      outage || kind === 'unreachable' || (kind === 'server' && (status ?? 500) >= 502);
  }
}
