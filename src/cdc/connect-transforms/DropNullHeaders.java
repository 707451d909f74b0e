// A Kafka Connect single message transform that removes every header whose value is null.
//
// Debezium's outbox EventRouter turns each placed column into a header, and a SQL NULL becomes a
// header with a null value. evgen's own relay leaves an optional header (aggregateVersion,
// traceId, correlationId, causationId, traceparent, tracestate) out when the envelope has no
// value for it, so this transform runs after the router to make CDC records carry exactly the
// same headers. Build it into a plugin folder of the Connect worker's plugin.path:
//
//   javac --release 17 -cp "<connect libs>/*" -d out DropNullHeaders.java
//   mkdir -p out/META-INF/services
//   echo dev.evgen.connect.DropNullHeaders > out/META-INF/services/org.apache.kafka.connect.transforms.Transformation
//   jar cf <plugin.path>/evgen-connect-transforms/evgen-connect-transforms.jar -C out .
package dev.evgen.connect;

import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.ConnectRecord;
import org.apache.kafka.connect.header.ConnectHeaders;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.header.Headers;
import org.apache.kafka.connect.transforms.Transformation;

public class DropNullHeaders<R extends ConnectRecord<R>> implements Transformation<R> {
  @Override
  public R apply(R record) {
    if (record == null) return null;
    Headers headers = record.headers();
    boolean hasNull = false;
    for (Header header : headers) {
      if (header.value() == null) {
        hasNull = true;
        break;
      }
    }
    if (!hasNull) return record;
    Headers kept = new ConnectHeaders();
    for (Header header : headers) {
      if (header.value() != null) kept.add(header);
    }
    return record.newRecord(
        record.topic(),
        record.kafkaPartition(),
        record.keySchema(),
        record.key(),
        record.valueSchema(),
        record.value(),
        record.timestamp(),
        kept);
  }

  @Override
  public ConfigDef config() {
    return new ConfigDef();
  }

  @Override
  public void configure(Map<String, ?> configs) {}

  @Override
  public void close() {}
}
