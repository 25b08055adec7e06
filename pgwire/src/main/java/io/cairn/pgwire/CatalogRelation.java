package io.cairn.pgwire;

import io.cairn.engine.row.Schema;
import java.util.Objects;

/**
 * A source or view as catalog queries show it (psql's {@code \d}, JDBC {@code DatabaseMetaData}):
 * a table (a source) or a materialized view (a view) in schema {@code public}.
 *
 * @param id the dataflow id (its catalog position); the relation's OID is derived from it
 * @param name the source's or view's name
 * @param view true for a view (shown as a materialized view), false for a source (a table)
 * @param schema its columns and their types
 */
public record CatalogRelation(long id, String name, boolean view, Schema schema) {
  public CatalogRelation {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(schema, "schema");
    if (id < 0) {
      throw new IllegalArgumentException("Cannot make catalog relation '" + name + "': negative id " + id);
    }
  }
}
