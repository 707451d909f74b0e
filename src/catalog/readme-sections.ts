/**
 * The README sections that problem hints send people to, by their exact heading. Hints name a
 * section only through `seeReadme`, and a test checks that every heading here exists in the
 * README, so no hint points to a section that was renamed or never written.
 */
export const README_SECTIONS = {
  catalog: 'Catalog and `evgen build`',
  transports: 'Transports per event: Kafka-only and RabbitMQ-only catalogs',
  ordering: 'Per-aggregate order of a consumer: `inOrder`',
} as const;

export type ReadmeSection = keyof typeof README_SECTIONS;

/** `see the README, "Catalog and `evgen build`"`: the tail of a hint. */
export function seeReadme(section: ReadmeSection): string {
  return `see the README, "${README_SECTIONS[section]}"`;
}
