package io.cairn.engine.sql;

import io.cairn.engine.row.Schema;

/**
 * One table of a SELECT's FROM clause (the FROM item or a joined one), as {@link FromClause}
 * resolved it: the columns of the joined row from {@code offset} to {@code offset +
 * schema.size()} are this table's.
 *
 * @param alias the name columns are qualified with: the alias, or else the table's name
 *     (unquoted, lower-case); unique within one FROM clause
 * @param table the source or view it reads (unquoted, lower-case)
 * @param schema the source's or view's schema, with its own column names
 * @param offset the index, in the joined row, of this table's first column
 */
record Relation(String alias, String table, Schema schema, int offset) {}
