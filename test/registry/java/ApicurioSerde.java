// Apicurio's JSON Schema serde for Kafka (Java, from Maven Central), against evgen's records on the
// real broker and the real registry. The serde's defaults are Confluent's framing: magic byte 0,
// then a 4-byte big-endian id (Default4ByteIdHandler, use-id contentId), no Kafka headers, and
// validation against the registered schema on both sides. Apicurio's Confluent API hands out the
// content id as a schema's id, so the ids evgen frames with are the ones this serde looks up.
//
//   read  <bootstrap> <topic> <group> <count> <registry v3 url> [<group id> <artifact id> <version>]
//     Reads <count> records from the beginning (60 s at most) through JsonSchemaKafkaDeserializer
//     and prints one line per record, tab-separated: `ok`, partition, key, the framed id (-1 when
//     plain), the deserialized value as compact JSON — or `refused`, partition, key, the serde's
//     error (a record the serde cannot read is reported, not fatal, so a test sees what a Java
//     consumer would). The optional coordinates are the serde's fallback artifact: the schema it
//     reads an unframed value with.
//   write <bootstrap> <topic> <registry v3 url> <group id> <artifact id> <version>
//     Serializes each line of standard input (a JSON value, its `aggregateId` the key) with
//     JsonSchemaKafkaSerializer for that artifact version, sends it and prints `sent`, key, the
//     framed id, partition, offset — or `refused`, key, the serde's error when it will not
//     serialize the value (nothing is sent then).
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.apicurio.registry.serde.config.SerdeConfig;
import io.apicurio.registry.serde.jsonschema.JsonSchemaKafkaDeserializer;
import io.apicurio.registry.serde.jsonschema.JsonSchemaKafkaSerializer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public class ApicurioSerde {
  private static final ObjectMapper JSON = new ObjectMapper();

  public static void main(String[] args) throws Exception {
    switch (args[0]) {
      case "read" -> read(args[1], args[2], args[3], Integer.parseInt(args[4]), args[5],
          args.length > 6 ? List.of(args[6], args[7], args[8]) : List.of());
      case "write" -> write(args[1], args[2], args[3], args[4], args[5], args[6]);
      default -> {
        System.err.println("usage: read|write …");
        System.exit(2);
      }
    }
  }

  /** The id after the magic byte, or -1 when the value is not framed. */
  private static long framedId(byte[] value) {
    if (value == null || value.length < 5 || value[0] != 0) return -1;
    return ByteBuffer.wrap(value, 1, 4).getInt();
  }

  private static String oneLine(Throwable error) {
    StringBuilder text = new StringBuilder();
    for (Throwable e = error; e != null; e = e.getCause()) {
      if (text.length() > 0) text.append(" <- ");
      text.append(e.getClass().getSimpleName()).append(": ").append(e.getMessage());
    }
    return text.toString().replace('\t', ' ').replace('\n', ' ');
  }

  static void read(
      String bootstrap, String topic, String group, int wanted, String registry, List<String> fallback)
      throws Exception {
    Properties props = new Properties();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    // Bytes from the consumer, then the serde by hand: a record it refuses is printed, not fatal.
    props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    Map<String, Object> serde = new HashMap<>();
    serde.put(SerdeConfig.REGISTRY_URL, registry);
    if (!fallback.isEmpty()) {
      serde.put(SerdeConfig.FALLBACK_ARTIFACT_GROUP_ID, fallback.get(0));
      serde.put(SerdeConfig.FALLBACK_ARTIFACT_ID, fallback.get(1));
      serde.put(SerdeConfig.FALLBACK_ARTIFACT_VERSION, fallback.get(2));
    }
    try (JsonSchemaKafkaDeserializer<JsonNode> deserializer = new JsonSchemaKafkaDeserializer<>();
        KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(props)) {
      deserializer.configure(serde, false);
      consumer.subscribe(List.of(topic));
      int seen = 0;
      long deadline = System.currentTimeMillis() + 60_000;
      while (seen < wanted && System.currentTimeMillis() < deadline) {
        for (ConsumerRecord<String, byte[]> record : consumer.poll(Duration.ofMillis(500))) {
          seen++;
          String head = record.partition() + "\t" + record.key();
          try {
            JsonNode value = deserializer.deserialize(topic, record.headers(), record.value());
            System.out.println(
                "ok\t" + head + "\t" + framedId(record.value()) + "\t" + JSON.writeValueAsString(value));
          } catch (RuntimeException error) {
            System.out.println("refused\t" + head + "\t" + oneLine(error));
          }
        }
      }
      if (seen < wanted) {
        System.err.println("read " + seen + " of " + wanted + " records within 60 s");
        System.exit(3);
      }
    }
  }

  static void write(
      String bootstrap, String topic, String registry, String groupId, String artifactId, String version)
      throws Exception {
    Map<String, Object> serde = new HashMap<>();
    serde.put(SerdeConfig.REGISTRY_URL, registry);
    // The version evgen pushed, found by its coordinates; never registered from here.
    serde.put(SerdeConfig.AUTO_REGISTER_ARTIFACT, false);
    serde.put(SerdeConfig.EXPLICIT_ARTIFACT_GROUP_ID, groupId);
    serde.put(SerdeConfig.EXPLICIT_ARTIFACT_ID, artifactId);
    serde.put(SerdeConfig.EXPLICIT_ARTIFACT_VERSION, version);
    Properties props = new Properties();
    props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    try (JsonSchemaKafkaSerializer<JsonNode> serializer = new JsonSchemaKafkaSerializer<>();
        KafkaProducer<String, byte[]> producer = new KafkaProducer<>(props)) {
      serializer.configure(serde, false);
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        if (line.isBlank()) continue;
        JsonNode value = JSON.readTree(line);
        String key = value.path("aggregateId").asText();
        byte[] bytes;
        try {
          // Serialized here (not as the producer's value serializer) to print the framed id.
          bytes = serializer.serialize(topic, value);
        } catch (RuntimeException error) {
          System.out.println("refused\t" + key + "\t" + oneLine(error));
          continue;
        }
        RecordMetadata sent = producer.send(new ProducerRecord<>(topic, key, bytes)).get();
        System.out.println(
            "sent\t" + key + "\t" + framedId(bytes) + "\t" + sent.partition() + "\t" + sent.offset());
      }
    }
  }
}
