/**
 * The documentation sections that problem hints send people to: the page (a path in the evgen
 * repository and package, under docs/) and its exact heading. Hints name a section only through
 * `seeDocs`, and a test checks that every heading here exists on its page, so no hint points to a
 * section that was renamed, moved or never written.
 */
export const DOC_SECTIONS = {
  catalog: { page: 'docs/guides/catalog.md', heading: 'Catalog and `evgen build`' },
  transports: {
    page: 'docs/guides/single-transport-catalogs.md',
    heading: 'Transports per event: Kafka-only and RabbitMQ-only catalogs',
  },
  ordering: {
    page: 'docs/guides/catalog.md',
    heading: 'Per-aggregate order of a consumer: `inOrder`',
  },
  'wire-format': {
    page: 'docs/guides/registry.md',
    heading: 'Which events are framed: `wireFormat`',
  },
} as const;

export type DocSection = keyof typeof DOC_SECTIONS;

/** `see docs/guides/catalog.md, "Catalog and `evgen build`"`: the tail of a hint. */
export function seeDocs(section: DocSection): string {
  const { page, heading } = DOC_SECTIONS[section];
  return `see ${page}, "${heading}"`;
}
