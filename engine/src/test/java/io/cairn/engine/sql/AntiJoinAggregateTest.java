package io.cairn.engine.sql;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.row.Column;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.TickPolicy;
import io.cairn.engine.testkit.ScriptedConnector;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * TPC-H Q22's shape — a GROUP BY over an anti-join (NOT EXISTS) of rows filtered by a scalar
 * subquery — maintained over customers and orders arriving in six ticks, against a Java oracle.
 * The anti-join emits a retraction before its insertion within a tick ({@code -r}, then {@code
 * +r}); a SUM that reset itself to an exact zero whenever its count of values passed through 0
 * lost the other values' part of the sum there (Q22 differed from PostgreSQL).
 */
class AntiJoinAggregateTest {
  @Test
  void aSumOverAnAntiJoinMaintainedOverTicksEqualsTheOracle() {
    Random rnd = new Random(3);
    Schema cs = Schema.of(Column.of("c_custkey", Type.BIGINT), Column.of("c_phone", Type.TEXT), Column.of("c_acctbal", Type.NUMERIC));
    Schema os = Schema.of(Column.of("o_orderkey", Type.BIGINT), Column.of("o_custkey", Type.BIGINT));
    List<List<ScriptedConnector.Rec>> cticks = new ArrayList<>();
    List<List<ScriptedConnector.Rec>> oticks = new ArrayList<>();
    List<Row> customers = new ArrayList<>();
    Set<Long> withOrders = new java.util.HashSet<>();
    int n = 1500;
    for (int t = 0; t < 6; t++) {
      List<ScriptedConnector.Rec> ct = new ArrayList<>();
      for (int i = t * n / 6; i < (t + 1) * n / 6; i++) {
        String phone = (10 + rnd.nextInt(25)) + "-" + rnd.nextInt(1000);
        BigDecimal bal = io.cairn.engine.row.Numeric.of(BigDecimal.valueOf(rnd.nextInt(1_100_000) - 100_000, 2));
        Row r = Row.of((long) i + 1, phone, bal);
        customers.add(r);
        ct.add(ScriptedConnector.Rec.upsert(Row.of((long) i + 1), r));
      }
      cticks.add(ct);
      List<ScriptedConnector.Rec> ot = new ArrayList<>();
      for (int k = 0; k < 2500; k++) {
        long key = t * 10_000L + k;
        long cust = 1 + rnd.nextInt(n);
        if (cust % 3 == 0) {
          continue;
        }
        withOrders.add(cust);
        ot.add(ScriptedConnector.Rec.upsert(Row.of(key), Row.of(key, cust)));
      }
      oticks.add(ot);
    }
    Set<String> codes = Set.of("13", "31", "23", "29", "30", "18", "17");
    BigDecimal sum = BigDecimal.ZERO;
    long cnt = 0;
    for (Row r : customers) {
      if (codes.contains(((String) r.get(1)).substring(0, 2)) && ((BigDecimal) r.get(2)).signum() > 0) {
        sum = sum.add((BigDecimal) r.get(2));
        cnt++;
      }
    }
    BigDecimal avg = io.cairn.engine.row.Numeric.divide(sum, BigDecimal.valueOf(cnt));
    Map<String, Object[]> exp = new TreeMap<>();
    for (Row r : customers) {
      String code = ((String) r.get(1)).substring(0, 2);
      if (codes.contains(code) && ((BigDecimal) r.get(2)).compareTo(avg) > 0 && !withOrders.contains(r.getLong(0))) {
        exp.merge(code, new Object[] {1L, r.get(2), r.getLong(0)},
            (a, b) -> new Object[] {(Long) a[0] + 1, ((BigDecimal) a[1]).add((BigDecimal) b[1]), (Long) a[2] + (Long) b[2]});
      }
    }
    for (int workers = 1; workers <= 2; workers++) {
      ScriptedConnector c = new ScriptedConnector();
      c.script("customer", new ScriptedConnector.Script(cs, List.of("c_custkey"), cticks));
      c.script("orders", new ScriptedConnector.Script(os, List.of("o_orderkey"), oticks));
      try (Engine e = Engine.builder().workers(workers).tickPolicy(new TickPolicy(100_000, java.time.Duration.ofMillis(50))).connector(c).build()) {
        e.createSource(1, ScriptedConnector.definition("customer"));
        e.createSource(2, ScriptedConnector.definition("orders"));
        SqlSession s = SqlFixture.session(e);
        String cc = "SUBSTRING(c_phone FROM 1 FOR 2) IN ('13', '31', '23', '29', '30', '18', '17')";
        s.execute("CREATE MATERIALIZED VIEW q22 AS SELECT cntrycode, COUNT(*) AS numcust, SUM(c_acctbal) AS totacctbal, SUM(c_custkey) AS k"
            + " FROM (SELECT SUBSTRING(c_phone FROM 1 FOR 2) AS cntrycode, c_acctbal, c_custkey FROM customer WHERE " + cc
            + " AND c_acctbal > (SELECT AVG(c_acctbal) FROM customer WHERE c_acctbal > 0.00 AND " + cc + ")"
            + " AND NOT EXISTS (SELECT * FROM orders WHERE o_custkey = c_custkey)" + ") AS custsale GROUP BY cntrycode");
        for (int t = 1; t <= 6; t++) {
          c.release(t);
          e.tick();
        }
        e.tick();
        StringBuilder want = new StringBuilder();
        exp.forEach((k, v) -> want.append(List.of(k, v[0], io.cairn.engine.row.Numeric.of((BigDecimal) v[1]), v[2])));
        StringBuilder got = new StringBuilder();
        e.peek("q22").forEach(r -> got.append(List.of(r.get(0), r.get(1), r.get(2), r.get(3))));
        assertThat(got.toString()).as("%d workers", workers).isEqualTo(want.toString());
      }
    }
  }
}
