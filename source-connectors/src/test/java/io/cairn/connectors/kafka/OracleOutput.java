package io.cairn.connectors.kafka;

import io.cairn.engine.row.Row;
import io.cairn.engine.source.SourceOutput;
import java.util.HashMap;
import java.util.Map;

/** The naive application of a source's output: a map for upserts, a multiset for appends. */
final class OracleOutput implements SourceOutput {
  final Map<Row, Row> upserts = new HashMap<>();
  final Map<Row, Long> appends = new HashMap<>();
  long deliveredUpserts;
  long deliveredAppends;

  @Override
  public void append(Row row, long diff) {
    deliveredAppends++;
    appends.merge(row, diff, Long::sum);
    appends.remove(row, 0L);
  }

  @Override
  public void upsert(Row key, Row row) {
    deliveredUpserts++;
    if (row == null) {
      upserts.remove(key);
    } else {
      upserts.put(key, row);
    }
  }
}
