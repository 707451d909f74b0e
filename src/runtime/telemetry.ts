/**
 * OpenTelemetry tracing, when the service has it. `@opentelemetry/api` is an optional peer: it
 * is loaded on first use, and when it is not installed every helper here runs its work with no
 * span (no cost beyond one failed import). A service turns tracing on by installing an
 * OpenTelemetry SDK as usual (tracer provider, W3C propagator); evgen uses the global API.
 *
 * One event makes one connected trace: the outbox write stores the active span's W3C trace
 * context (`traceparent`/`tracestate`) in the row's headers; the relay's publish span is its child
 * and replaces the context the broker carries; each consumer's process span (around the
 * inbox-guarded handler) is a child of the publish span, with a link to it as messaging
 * conventions recommend. No OpenTelemetry type appears in evgen's public API.
 */
import type { Context, Span, Tracer } from '@opentelemetry/api';

type OtelApi = typeof import('@opentelemetry/api');

let loading: Promise<OtelApi | undefined> | undefined;

/** The OpenTelemetry API, or undefined when the package is not installed. */
function otel(): Promise<OtelApi | undefined> {
  loading ??= import('@opentelemetry/api').then(
    (module) => module,
    () => undefined,
  );
  return loading;
}

export const TRACEPARENT_HEADER = 'traceparent';
export const TRACESTATE_HEADER = 'tracestate';

const TRACER_NAME = 'evgen';

/** Header values as strings (AMQP long strings arrive as Buffers); others are dropped. */
function textHeaders(headers: Readonly<Record<string, unknown>>): Record<string, string> {
  const text: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value === 'string') text[name] = value;
    else if (Buffer.isBuffer(value)) text[name] = value.toString('utf8');
  }
  return text;
}

/**
 * `headers` plus the active span's trace context, unless they already carry one. What the outbox
 * writer stores with a row.
 */
export async function withActiveTraceContext(
  headers: Readonly<Record<string, string>>,
): Promise<Readonly<Record<string, string>>> {
  if (headers[TRACEPARENT_HEADER] !== undefined) return headers;
  const api = await otel();
  if (api === undefined || api.trace.getActiveSpan() === undefined) return headers;
  const carrier: Record<string, string> = { ...headers };
  api.propagation.inject(api.context.active(), carrier);
  return carrier;
}

/** What a helper traces with: evgen's tracer, and whether a propagator can carry a context. */
interface Tracing {
  readonly tracer: Tracer;
  readonly propagates: boolean;
}

/**
 * The tracer and whether a propagator is registered, or undefined when nothing in this process
 * records spans or carries trace context: the API is installed (other packages depend on it) but
 * no SDK registered a tracer provider (the API then hands out its ProxyTracer, whose spans record
 * nothing) and no propagator (it injects and extracts nothing). Spans made then would only cost
 * time per message, so the helpers run their work without them, and what a message carries
 * travels unchanged.
 */
function activeTracing(api: OtelApi): Tracing | undefined {
  const propagates = api.propagation.fields().length > 0;
  const tracer = api.trace.getTracer(TRACER_NAME);
  return !propagates && tracer instanceof api.ProxyTracer ? undefined : { tracer, propagates };
}

interface MessageSpanInfo {
  readonly messageId: string;
  readonly eventType: string;
  readonly aggregateId?: string;
  /** `rabbitmq`, `kafka`, `in-process`, or the publisher's own name. */
  readonly system?: string;
  /** The consumer (inbox key) handling it; consumer spans only. */
  readonly consumer?: string;
}

function attributes(info: MessageSpanInfo, operation: 'publish' | 'process') {
  const attributes: Record<string, string> = {
    'messaging.operation.type': operation,
    'messaging.message.id': info.messageId,
    'evgen.event_type': info.eventType,
  };
  if (info.system !== undefined) attributes['messaging.system'] = info.system;
  if (info.aggregateId !== undefined) attributes['evgen.aggregate_id'] = info.aggregateId;
  if (info.consumer !== undefined) attributes['messaging.consumer.group.name'] = info.consumer;
  return attributes;
}

function recordError(api: OtelApi, span: Span, error: unknown): void {
  span.recordException(error instanceof Error ? error : String(error));
  span.setStatus({
    code: api.SpanStatusCode.ERROR,
    message: String((error as Error)?.message ?? error),
  });
}

/**
 * Runs a relay publish of one or more messages (an aggregate's rows sent together) with a
 * PRODUCER span per message that continues the trace stored with its row; `publish` gets each
 * message's headers to send, carrying its publish span's context, and returns one result per
 * message. `failure` tells whether a resolved result is a failed attempt (the relay reports
 * failures as values). `publish` runs in the first span's context.
 */
export async function tracePublishes<T>(
  messages: readonly {
    readonly headers: Readonly<Record<string, string>>;
    readonly info: MessageSpanInfo;
  }[],
  publish: (headers: readonly Readonly<Record<string, string>>[]) => Promise<readonly T[]>,
  failure: (result: T) => unknown = () => undefined,
): Promise<readonly T[]> {
  const api = await otel();
  const tracing = api === undefined ? undefined : activeTracing(api);
  if (api === undefined || tracing === undefined)
    return publish(messages.map((message) => message.headers));
  // Without a propagator the publish span's context cannot be written, so the context stored
  // with the row (the writer's) is sent as it is rather than dropped.
  const { tracer, propagates } = tracing;
  const spans = messages.map(({ headers, info }) => {
    const parent = api.propagation.extract(api.ROOT_CONTEXT, headers);
    const span = tracer.startSpan(
      `${info.eventType} publish`,
      { kind: api.SpanKind.PRODUCER, attributes: attributes(info, 'publish') },
      parent,
    );
    const context: Context = api.trace.setSpan(parent, span);
    if (!propagates) return { span, context, carrier: headers };
    const carrier: Record<string, string> = { ...headers };
    delete carrier[TRACEPARENT_HEADER];
    delete carrier[TRACESTATE_HEADER];
    api.propagation.inject(context, carrier);
    return { span, context, carrier };
  });
  try {
    const results = await api.context.with(spans[0]?.context ?? api.context.active(), () =>
      publish(spans.map(({ carrier }) => carrier)),
    );
    for (const [index, result] of results.entries()) {
      const failed = failure(result);
      if (failed !== undefined) recordError(api, spans[index]!.span, failed);
    }
    return results;
  } catch (error) {
    for (const { span } of spans) recordError(api, span, error);
    throw error;
  } finally {
    for (const { span } of spans) span.end();
  }
}

/**
 * Runs a consumer's handling of one delivery inside a CONSUMER span whose parent is the trace
 * context the message carries (linked to it as well); the handler's own spans (database calls,
 * outbox writes of follow-up events) become its children.
 */
export async function traceProcess<T>(
  headers: Readonly<Record<string, unknown>> | undefined,
  info: MessageSpanInfo,
  handle: () => Promise<T>,
): Promise<T> {
  const api = await otel();
  const tracing = api === undefined ? undefined : activeTracing(api);
  if (api === undefined || tracing === undefined) return handle();
  const parent = api.propagation.extract(api.ROOT_CONTEXT, textHeaders(headers ?? {}));
  const producer = api.trace.getSpanContext(parent);
  const span = tracing.tracer.startSpan(
    `${info.eventType} process`,
    {
      kind: api.SpanKind.CONSUMER,
      attributes: attributes(info, 'process'),
      ...(producer !== undefined && api.isSpanContextValid(producer)
        ? { links: [{ context: producer }] }
        : {}),
    },
    parent,
  );
  try {
    const result = await api.context.with(api.trace.setSpan(parent, span), handle);
    if (typeof result === 'string') span.setAttribute('evgen.inbox.result', result);
    return result;
  } catch (error) {
    recordError(api, span, error);
    throw error;
  } finally {
    span.end();
  }
}
