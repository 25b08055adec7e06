package io.cairn.engine.dataflow;

import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;

/**
 * How a collection's rows are split into (key, val) for its arrangement, and joined back.
 * {@code wholeRow} (derived) means the key is the entire row in column order and the val empty,
 * so both directions are the identity.
 */
public record Layout(int[] keyCols, int[] valCols, Schema rowSchema, boolean wholeRow) {
  /** Key = {@code keyCols}, val = the other columns in order. */
  public static Layout of(Schema rowSchema, int[] keyCols) {
    boolean[] isKey = new boolean[rowSchema.size()];
    for (int k : keyCols) {
      isKey[k] = true;
    }
    int[] vals = new int[rowSchema.size() - keyCols.length];
    int v = 0;
    for (int i = 0; i < isKey.length; i++) {
      if (!isKey[i]) {
        vals[v++] = i;
      }
    }
    boolean identity = vals.length == 0;
    for (int i = 0; i < keyCols.length && identity; i++) {
      identity = keyCols[i] == i;
    }
    return new Layout(keyCols.clone(), vals, rowSchema, identity);
  }

  /** Key = the whole row. */
  public static Layout wholeRow(Schema rowSchema) {
    int[] all = new int[rowSchema.size()];
    for (int i = 0; i < all.length; i++) {
      all[i] = i;
    }
    return of(rowSchema, all);
  }

  public Schema keySchema() {
    return rowSchema.select(keyCols);
  }

  public Schema valSchema() {
    return rowSchema.select(valCols);
  }

  public Row key(Row row) {
    return wholeRow ? row : row.select(keyCols);
  }

  public Row val(Row row) {
    return valCols.length == 0 ? Row.EMPTY : row.select(valCols);
  }

  /** The row of entry {@code i} of {@code batch}, a batch of this layout's arrangement: {@code join(key, val)} in one step. */
  public Row row(io.cairn.engine.trace.Batch batch, int i) {
    return batch.row(i, keyCols, valCols, rowSchema.size());
  }

  public Row join(Row key, Row val) {
    if (wholeRow) {
      return key;
    }
    Object[] out = new Object[rowSchema.size()];
    for (int i = 0; i < keyCols.length; i++) {
      out[keyCols[i]] = key.get(i);
    }
    for (int i = 0; i < valCols.length; i++) {
      out[valCols[i]] = val.get(i);
    }
    return Row.wrap(out);
  }
}
