// Prints the Java client's default partition for each key and partition count:
//   java -cp '<kafka libs>/*' KeyPartitions.java <count>... -- <key>...
// Output: one line per key, tab-separated: murmur2(key bytes), then the partition per count.
// Keys are UTF-8. BuiltInPartitioner.partitionForKey is what the Java producer uses for a keyed record.
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.apache.kafka.common.utils.Utils;

public class KeyPartitions {
  public static void main(String[] args) {
    List<Integer> counts = new ArrayList<>();
    int i = 0;
    for (; i < args.length && !args[i].equals("--"); i++) counts.add(Integer.parseInt(args[i]));
    StringBuilder out = new StringBuilder();
    for (i = i + 1; i < args.length; i++) {
      byte[] key = args[i].getBytes(StandardCharsets.UTF_8);
      out.append(Utils.murmur2(key));
      for (int count : counts) out.append('\t').append(BuiltInPartitioner.partitionForKey(key, count));
      out.append('\n');
    }
    System.out.print(out);
  }
}
