/**
 * The generated route tables (eventType → exchange, topic…) of every transport are looked up
 * one way: an own property of the table, never an inherited one (`constructor`, `__proto__`).
 */
import { UnknownEventError } from './errors.js';

/**
 * The route of `eventType` in `routes`; an unknown type is a programming error (the catalog has
 * no route for it), thrown as `UnknownEventError` and never retried.
 */
export function lookupRoute<Route>(
  routes: Readonly<Record<string, Route>>,
  eventType: string,
  /** What a route is on this transport, for the message: `Kafka topic`, `RabbitMQ route`. */
  routeName: string,
): Route {
  const route = Object.prototype.hasOwnProperty.call(routes, eventType)
    ? routes[eventType]
    : undefined;
  if (route === undefined) {
    throw new UnknownEventError(
      eventType,
      undefined,
      `no ${routeName} for event type '${eventType}' (is it in the catalog?)`,
    );
  }
  return route;
}
