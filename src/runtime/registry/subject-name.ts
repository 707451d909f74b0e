/**
 * Subject name strategies, as Confluent's serializers name them, so a subject evgen registers is
 * the one a Confluent or kafkajs serializer configured with the same strategy looks up:
 *
 *   TopicNameStrategy        `<topic>-value`   one subject per topic
 *   RecordNameStrategy       `<record name>`   one subject per event type, on any topic
 *   TopicRecordNameStrategy  `<topic>-<record name>`
 *
 * The record name of a JSON schema is its `title`; evgen registers the envelope of an event with
 * `title` = the event type (`order.OrderCreated`), so the record name is the event type.
 *
 * The default is RecordNameStrategy: evgen's topics are shared domain topics carrying several
 * event types, and each event type has its own versions and compatibility mode. Under
 * TopicNameStrategy they would all be versions of one subject (v1 of OrderCreated followed by v1
 * of OrderPaid, checked against each other), which only works for a topic with one event type.
 * The record name needs no topic (RabbitMQ-only events get subjects too) and does not change when
 * a deployment prefixes its topics.
 */
export const SUBJECT_NAME_STRATEGIES = [
  'RecordNameStrategy',
  'TopicNameStrategy',
  'TopicRecordNameStrategy',
] as const;
export type SubjectNameStrategy = (typeof SUBJECT_NAME_STRATEGIES)[number];

export const DEFAULT_SUBJECT_NAME_STRATEGY: SubjectNameStrategy = 'RecordNameStrategy';

/** The subject of an event under `strategy`; undefined when the strategy needs a topic and the event has none. */
export function subjectName(
  strategy: SubjectNameStrategy,
  event: { readonly eventType: string; readonly topic?: string | undefined },
): string | undefined {
  switch (strategy) {
    case 'RecordNameStrategy':
      return event.eventType;
    case 'TopicNameStrategy':
      return event.topic === undefined ? undefined : `${event.topic}-value`;
    case 'TopicRecordNameStrategy':
      return event.topic === undefined ? undefined : `${event.topic}-${event.eventType}`;
  }
}
