// A plain Java kafka-clients consumer, to check that evgen's records read the same from Java:
//   java -cp '<kafka libs>/*' InteropConsumer.java <bootstrap> <topic> <group> <count> <partitions>
// Reads <count> records from the beginning (60 s at most) and prints one line per record,
// tab-separated: partition, offset, Java's partition for the key, base64(key), base64(value),
// then name=base64(value) per header.
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public class InteropConsumer {
  public static void main(String[] args) {
    Properties props = new Properties();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
    props.put(ConsumerConfig.GROUP_ID_CONFIG, args[2]);
    props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    int wanted = Integer.parseInt(args[3]);
    int partitions = Integer.parseInt(args[4]);
    Base64.Encoder b64 = Base64.getEncoder();
    int seen = 0;
    long deadline = System.currentTimeMillis() + 60_000;
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
      consumer.subscribe(List.of(args[1]));
      while (seen < wanted && System.currentTimeMillis() < deadline) {
        for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(500))) {
          StringBuilder line = new StringBuilder();
          line.append(record.partition()).append('\t').append(record.offset()).append('\t');
          line.append(BuiltInPartitioner.partitionForKey(record.key(), partitions)).append('\t');
          line.append(b64.encodeToString(record.key())).append('\t');
          line.append(b64.encodeToString(record.value()));
          for (Header header : record.headers()) {
            line.append('\t').append(header.key()).append('=').append(b64.encodeToString(header.value()));
          }
          System.out.println(line);
          seen++;
        }
      }
    }
    if (seen < wanted) {
      System.err.println("read " + seen + " of " + wanted + " records within 60 s");
      System.exit(3);
    }
  }
}
