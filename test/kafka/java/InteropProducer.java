// A plain Java kafka-clients producer writing foreign evgen envelopes, as a Java service would:
//   java -cp '<kafka libs>/*' InteropProducer.java <bootstrap> <topic> <eventType> <payload-json> <form>...
// Per <form> it sends one record whose messageId Java makes: `random` UUID.randomUUID(),
// `upper` the same upper-cased, `name-based` UUID.nameUUIDFromBytes (v3), `nil` new UUID(0, 0),
// `max` new UUID(-1, -1), `braces` {uuid}, `urn` urn:uuid:uuid, `compact` without hyphens,
// `plain` a non-UUID id. <payload-json> holds `@AGGREGATE@` where the aggregate id goes (a fresh
// random UUID per record, also the key). Prints `form<TAB>messageId<TAB>aggregateId` per record.
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Properties;
import java.util.UUID;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

public class InteropProducer {
  static String messageId(String form) {
    UUID random = UUID.randomUUID();
    switch (form) {
      case "random": return random.toString();
      case "upper": return random.toString().toUpperCase();
      case "name-based": return UUID.nameUUIDFromBytes(random.toString().getBytes(StandardCharsets.UTF_8)).toString();
      case "nil": return new UUID(0L, 0L).toString();
      case "max": return new UUID(-1L, -1L).toString();
      case "braces": return "{" + random + "}";
      case "urn": return "urn:uuid:" + random;
      case "compact": return random.toString().replace("-", "");
      case "plain": return "order-42-created";
      default: throw new IllegalArgumentException("unknown form " + form);
    }
  }

  public static void main(String[] args) throws Exception {
    Properties props = new Properties();
    props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
    props.put(ProducerConfig.ACKS_CONFIG, "all");
    props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    String topic = args[1];
    String eventType = args[2];
    String payloadTemplate = args[3];
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
      for (int i = 4; i < args.length; i++) {
        String form = args[i];
        String id = messageId(form);
        String aggregateId = UUID.randomUUID().toString();
        String value = "{\"messageId\":\"" + id + "\",\"eventType\":\"" + eventType
            + "\",\"schemaVersion\":1,\"aggregateType\":\"Order\",\"aggregateId\":\"" + aggregateId
            + "\",\"occurredAt\":\"" + Instant.now() + "\",\"payload\":"
            + payloadTemplate.replace("@AGGREGATE@", aggregateId) + "}";
        ProducerRecord<String, String> record = new ProducerRecord<>(topic, aggregateId, value);
        record.headers().add("messageId", id.getBytes(StandardCharsets.UTF_8));
        record.headers().add("eventType", eventType.getBytes(StandardCharsets.UTF_8));
        producer.send(record).get();
        System.out.println(form + "\t" + id + "\t" + aggregateId);
      }
    }
  }
}
