/**
 * The default event type string of an event that does not set `eventType` in its event.json,
 * built from a naming template (config `naming.eventType`). Teams differ here (`order.OrderCreated`,
 * `order.order-created`, `order.order_created`), and the string travels in every envelope, so it
 * is chosen once per catalog.
 */
import { kebabCase } from '../common/naming.js';

export const DEFAULT_EVENT_TYPE_FORMAT = '{domain}.{EventName}';

/** Placeholders a template may use, and what each becomes for `order/OrderCreated`. */
const PLACEHOLDERS: Readonly<Record<string, (domain: string, name: string) => string>> = {
  '{domain}': (domain) => domain,
  '{EventName}': (_, name) => name,
  '{eventName}': (_, name) => name[0]!.toLowerCase() + name.slice(1),
  '{event-name}': (_, name) => kebabCase(name),
  '{event_name}': (_, name) => kebabCase(name).replace(/-/g, '_'),
};

const EVENT_PLACEHOLDERS = Object.keys(PLACEHOLDERS).filter(
  (placeholder) => placeholder !== '{domain}',
);

/** Why a template is unusable, or undefined when it is fine. */
export function eventTypeFormatProblem(format: string): string | undefined {
  const unknown =
    format.match(/\{[^}]*\}/g)?.filter((placeholder) => !(placeholder in PLACEHOLDERS)) ?? [];
  if (unknown.length > 0)
    return `unknown placeholder ${unknown[0]!}; use ${Object.keys(PLACEHOLDERS).join(', ')}`;
  // Without both parts two events could get the same type string.
  if (!format.includes('{domain}')) return 'must contain {domain}';
  if (!EVENT_PLACEHOLDERS.some((placeholder) => format.includes(placeholder)))
    return `must contain one of ${EVENT_PLACEHOLDERS.join(', ')}`;
  if (!/^[A-Za-z0-9_.{}-]+$/.test(format))
    return 'may contain only letters, digits, ".", "_", "-" and placeholders';
  // The same rule event.json's own `eventType` follows: dot-separated names.
  if (
    !/^[A-Za-z][A-Za-z0-9_-]*(\.[A-Za-z][A-Za-z0-9_-]*)*$/.test(
      formatEventType(format, 'order', 'OrderCreated'),
    )
  ) {
    return 'must give dot-separated names, e.g. "{domain}.{EventName}"';
  }
  return undefined;
}

/** `formatEventType('{domain}.{event-name}', 'order', 'OrderCreated')` → `order.order-created`. */
export function formatEventType(format: string, domain: string, name: string): string {
  return format.replace(/\{[^}]*\}/g, (placeholder) => {
    const build = PLACEHOLDERS[placeholder];
    if (build === undefined) throw new TypeError(`unknown event type placeholder ${placeholder}`);
    return build(domain, name);
  });
}
