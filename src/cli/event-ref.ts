/** Parses the `<domain>/<EventName>` argument of `evgen new` and `evgen version`. */
import { CatalogError } from '../catalog/catalog-error.js';
import {
  DOMAIN_NAME,
  EVENT_NAME,
  reservedDomainName,
  reservedEventName,
} from '../catalog/name-rules.js';

export function parseEventRef(ref: string): { domain: string; name: string } {
  const match = /^([^/]+)\/([^/]+)$/.exec(ref);
  const domain = match?.[1] ?? '';
  const name = match?.[2] ?? '';
  const problem = (message: string, hint: string) =>
    new CatalogError([{ code: 'invalid-event-ref', file: ref, pointer: '', message, hint }]);
  if (match === null) throw problem('expected <domain>/<EventName>', 'e.g. order/OrderCreated');
  if (!DOMAIN_NAME.test(domain))
    throw problem(
      `domain ${JSON.stringify(domain)} is not lower-case kebab-case`,
      'use ^[a-z][a-z0-9-]*$, e.g. "order"',
    );
  if (!EVENT_NAME.test(name))
    throw problem(
      `event name ${JSON.stringify(name)} is not PascalCase`,
      'use ^[A-Z][A-Za-z0-9]*$, e.g. "OrderCreated"',
    );
  const reserved = reservedDomainName(domain) ?? reservedEventName(name);
  if (reserved !== undefined) throw problem(reserved, 'choose another name');
  return { domain, name };
}
