package io.cairn.engine.sql;

import io.cairn.engine.row.Schema;
import io.cairn.engine.source.Envelope;
import java.util.List;
import java.util.Map;

/** A parsed statement. SELECT bodies are kept as text (with the statement's prefix blanked, so
 * positions reported by JSqlParser are positions in the original statement). */
sealed interface Statement {
  /** Whether the statement changes the catalog. */
  default boolean ddl() {
    return false;
  }

  record CreateSource(
      String name, Lexer.Token namePos, boolean ifNotExists, String connector, Map<String, String> options,
      Schema schema, List<String> primaryKey, Envelope envelope) implements Statement {
    @Override
    public boolean ddl() {
      return true;
    }
  }

  record CreateView(String name, Lexer.Token namePos, boolean ifNotExists, String select) implements Statement {
    @Override
    public boolean ddl() {
      return true;
    }
  }

  /** CREATE SINK name FROM relation INTO connector (options) [KEY (cols)] FORMAT word ENVELOPE UPSERT|DEBEZIUM. */
  record CreateSink(
      String name, Lexer.Token namePos, boolean ifNotExists, String from, Lexer.Token fromPos, String connector,
      Map<String, String> options, List<String> key, String format, io.cairn.engine.sink.SinkEnvelope envelope) implements Statement {
    @Override
    public boolean ddl() {
      return true;
    }
  }

  enum ObjectKind {
    SOURCE,
    VIEW,
    SINK;

    String lower() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  record Drop(ObjectKind kind, String name, Lexer.Token namePos, boolean ifExists, boolean cascade) implements Statement {
    @Override
    public boolean ddl() {
      return true;
    }
  }

  record Show(ObjectKind kind) implements Statement {}

  /** EXPLAIN VIEW name. */
  record ExplainView(String name, Lexer.Token namePos) implements Statement {}

  /** EXPLAIN SELECT ... or EXPLAIN CREATE MATERIALIZED VIEW name AS SELECT ...: the plan it would build. */
  record ExplainSelect(String viewName, String select) implements Statement {}

  record Select(String select) implements Statement {}
}
