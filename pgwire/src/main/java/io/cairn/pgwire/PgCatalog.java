package io.cairn.pgwire;

import io.cairn.engine.row.Column;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * cairn's sources and views as PostgreSQL's system catalogs would describe them: each source a
 * table (relkind {@code r}), each view a materialized view ({@code m}), all in schema {@value
 * #SCHEMA}, owned by {@value #OWNER}, with OID {@value #FIRST_OID} + the dataflow id, and their
 * columns numbered from 1 with the types results are sent with ({@link PgType}). An immutable
 * value, built per catalog query.
 *
 * @param relations sorted by name
 */
record PgCatalog(List<Rel> relations) {
  static final String SCHEMA = "public";
  static final String OWNER = "cairn";
  static final long FIRST_OID = 16384;

  /** A relation: a {@code pg_class} row and its {@code pg_attribute} rows. */
  record Rel(long oid, String name, char relkind, List<Attr> attrs) {
    Rel {
      attrs = List.copyOf(attrs);
    }
  }

  /**
   * A column: {@code attnum}, {@code attname}, its type and {@code atttypmod} (a {@code
   * numeric(p, s)}'s {@code (p << 16 | s) + 4}; -1 for none).
   */
  record Attr(int num, String name, PgType type, int typmod) {
    /** {@code format_type(atttypid, atttypmod)}: {@code numeric(15,2)}, {@code bigint}. */
    String formatType() {
      return typmod < 0 ? type.sqlName : type.sqlName + "(" + ((typmod - 4) >> 16) + "," + ((typmod - 4) & 0xffff) + ")";
    }
  }

  PgCatalog {
    relations = relations.stream().sorted(Comparator.comparing(Rel::name)).toList();
  }

  static PgCatalog of(List<CatalogRelation> relations) {
    List<Rel> rels = new ArrayList<>();
    for (CatalogRelation r : relations) {
      List<Attr> attrs = new ArrayList<>();
      int num = 1;
      for (Column c : r.schema().columns()) {
        attrs.add(new Attr(num++, c.name(), PgType.of(c.type()), c.precision() == Column.NONE ? -1 : (c.precision() << 16 | c.scale()) + 4));
      }
      rels.add(new Rel(FIRST_OID + r.id(), r.name(), r.view() ? 'm' : 'r', attrs));
    }
    return new PgCatalog(rels);
  }

  Optional<Rel> byOid(String oid) {
    for (Rel r : relations) {
      if (Long.toString(r.oid()).equals(oid)) {
        return Optional.of(r);
      }
    }
    return Optional.empty();
  }
}
