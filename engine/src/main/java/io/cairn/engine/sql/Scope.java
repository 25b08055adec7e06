package io.cairn.engine.sql;

import io.cairn.engine.row.Schema;
import java.util.List;
import java.util.Locale;
import net.sf.jsqlparser.schema.Column;
import net.sf.jsqlparser.schema.Table;

/**
 * Name resolution over the tables of a FROM clause: which column of the joined row a (possibly
 * qualified) column name means. {@code schema} is the schema of the row being read: the joined
 * row of all the relations, or a prefix of it while a JOIN's ON condition is planned.
 *
 * <p>Names are case-insensitive: an identifier is compared after {@link #unquote} (surrounding
 * double quotes or backticks removed, lower-cased). An unqualified name must match a column of
 * exactly one relation; a qualified one ({@code t.c}) names a relation by its alias. Failures
 * are {@link SqlException}s at the name's position: "unknown table 't'", "unknown column 'c'",
 * "unknown column 't.c'", "column 'c' is ambiguous (qualify it with a table name)".
 *
 * <p>Immutable.
 */
final class Scope {
  private final PlanErrors errors;
  private final List<Relation> rels;
  private final Schema schema;
  private final Scope outer; // names this scope lacks: a correlated subquery's outer query, or null

  Scope(PlanErrors errors, List<Relation> rels, Schema schema) {
    this(errors, rels, schema, null);
  }

  private Scope(PlanErrors errors, List<Relation> rels, Schema schema, Scope outer) {
    this.errors = errors;
    this.rels = List.copyOf(rels);
    this.schema = schema;
    this.outer = outer;
  }

  /**
   * A subquery's scope over the row of {@code outer} followed by this scope's row ({@code joined}):
   * this scope's relations move right by {@code outer}'s width, and a name none of them has is
   * resolved in {@code outer} (an inner name hides an outer one, as in SQL).
   */
  Scope after(Scope outer, Schema joined) {
    int by = outer.schema().size();
    List<Relation> moved = rels.stream().map(r -> new Relation(r.alias(), r.table(), r.schema(), r.offset() + by)).toList();
    return new Scope(errors, moved, joined, outer);
  }

  /** The relations of the FROM clause, in FROM order. */
  List<Relation> relations() {
    return rels;
  }

  /** The schema of the row the resolved indexes refer to. */
  Schema schema() {
    return schema;
  }

  /** An identifier as cairn compares it: surrounding {@code "} or {@code `} removed, lower-cased. */
  static String unquote(String s) {
    String x = s;
    if (x.length() >= 2 && ((x.startsWith("\"") && x.endsWith("\"")) || (x.startsWith("`") && x.endsWith("`")))) {
      x = x.substring(1, x.length() - 1);
    }
    return x.toLowerCase(Locale.ROOT);
  }

  /** The relation whose alias is {@code t}'s name; throws "unknown table" at {@code node}'s position. */
  Relation relation(Table t, Object node) {
    Relation r = find(t);
    if (r == null) {
      throw errors.error(node, "unknown table '" + unquote(t.getName()) + "'");
    }
    return r;
  }

  private Relation find(Table t) {
    String q = unquote(t.getName());
    for (Relation r : rels) {
      if (r.alias().equals(q)) {
        return r;
      }
    }
    return null;
  }

  /** The index of the column in the joined row; throws naming an unknown or ambiguous column. */
  int resolve(Column c) {
    String name = unquote(c.getColumnName());
    Table t = c.getTable();
    if (t != null && t.getName() != null) {
      if (outer != null && find(t) == null) {
        return outer.resolve(c);
      }
      Relation r = relation(t, c);
      int i = r.schema().indexOf(name);
      if (i < 0) {
        throw errors.error(c, "unknown column '" + r.alias() + "." + name + "'");
      }
      return r.offset() + i;
    }
    int found = -1;
    for (Relation r : rels) {
      int i = r.schema().indexOf(name);
      if (i >= 0) {
        if (found >= 0) {
          throw errors.error(c, "column '" + name + "' is ambiguous (qualify it with a table name)");
        }
        found = r.offset() + i;
      }
    }
    if (found < 0 && outer != null) {
      return outer.resolve(c);
    }
    if (found < 0) {
      throw errors.error(c, "unknown column '" + name + "'");
    }
    return found;
  }
}
