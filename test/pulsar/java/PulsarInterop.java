// Apache Pulsar's own Java client (org.apache.pulsar:pulsar-client), to check that evgen's
// messages read the same from Java and that evgen consumes what Java produced:
//
//   java -cp '<classes>:<libs>/*' PulsarInterop consume <serviceUrl> <topic> <subscription> <count>
//     Reads <count> messages from the earliest position on an Exclusive subscription (60 s at
//     most), acknowledges each and prints one line per message in the order received,
//     tab-separated: topic (the partition's name on a partitioned topic), message id,
//     base64(key UTF-8, or "-" for none), base64(payload bytes), then name=base64(value) per
//     property, sorted by name.
//
//   java -cp ... PulsarInterop produce <serviceUrl> <topic>
//     Reads lines from standard input, each base64(key) TAB base64(payload) then TAB
//     name=base64(value) per property, sends them in order (asynchronously, key-based batching:
//     what Pulsar asks of producers feeding Key_Shared subscriptions), waits for every send and
//     prints the message ids in input order.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.BatcherBuilder;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.SubscriptionType;
import org.apache.pulsar.client.api.TypedMessageBuilder;

public class PulsarInterop {
  private static final Base64.Encoder B64 = Base64.getEncoder();
  private static final Base64.Decoder UNB64 = Base64.getDecoder();

  public static void main(String[] args) throws Exception {
    try (PulsarClient client = PulsarClient.builder().serviceUrl(args[1]).build()) {
      switch (args[0]) {
        case "consume" -> consume(client, args[2], args[3], Integer.parseInt(args[4]));
        case "produce" -> produce(client, args[2]);
        default -> throw new IllegalArgumentException("unknown mode " + args[0]);
      }
    }
  }

  private static void consume(PulsarClient client, String topic, String subscription, int wanted)
      throws Exception {
    int seen = 0;
    long deadline = System.currentTimeMillis() + 60_000;
    try (Consumer<byte[]> consumer =
        client
            .newConsumer(Schema.BYTES)
            .topic(topic)
            .subscriptionName(subscription)
            .subscriptionType(SubscriptionType.Exclusive)
            .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
            .subscribe()) {
      while (seen < wanted && System.currentTimeMillis() < deadline) {
        Message<byte[]> message = consumer.receive(500, TimeUnit.MILLISECONDS);
        if (message == null) continue;
        StringBuilder line = new StringBuilder();
        line.append(message.getTopicName()).append('\t').append(message.getMessageId());
        line.append('\t')
            .append(
                message.hasKey()
                    ? B64.encodeToString(message.getKey().getBytes(StandardCharsets.UTF_8))
                    : "-");
        line.append('\t').append(B64.encodeToString(message.getValue()));
        for (Map.Entry<String, String> property :
            new TreeMap<>(message.getProperties()).entrySet()) {
          line.append('\t')
              .append(property.getKey())
              .append('=')
              .append(B64.encodeToString(property.getValue().getBytes(StandardCharsets.UTF_8)));
        }
        System.out.println(line);
        consumer.acknowledge(message);
        seen++;
      }
    }
    if (seen < wanted) {
      System.err.println("read " + seen + " of " + wanted + " messages within 60 s");
      System.exit(3);
    }
  }

  private static void produce(PulsarClient client, String topic) throws Exception {
    List<CompletableFuture<MessageId>> sends = new ArrayList<>();
    try (Producer<byte[]> producer =
            client
                .newProducer(Schema.BYTES)
                .topic(topic)
                .batcherBuilder(BatcherBuilder.KEY_BASED)
                .create();
        BufferedReader input =
            new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
      for (String line = input.readLine(); line != null; line = input.readLine()) {
        if (line.isEmpty()) continue;
        String[] fields = line.split("\t");
        TypedMessageBuilder<byte[]> message =
            producer
                .newMessage()
                .key(new String(UNB64.decode(fields[0]), StandardCharsets.UTF_8))
                .value(UNB64.decode(fields[1]));
        for (int i = 2; i < fields.length; i++) {
          int eq = fields[i].indexOf('=');
          message.property(
              fields[i].substring(0, eq),
              new String(UNB64.decode(fields[i].substring(eq + 1)), StandardCharsets.UTF_8));
        }
        sends.add(message.sendAsync());
      }
      producer.flush();
      for (CompletableFuture<MessageId> send : sends) {
        System.out.println(send.get(60, TimeUnit.SECONDS));
      }
    }
  }
}
