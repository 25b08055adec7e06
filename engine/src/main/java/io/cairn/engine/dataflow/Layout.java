package io.cairn.engine.dataflow;

import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;

/** How a collection's rows are split into (key, val) for its arrangement, and joined back. */
public record Layout(int[] keyCols, int[] valCols, Schema rowSchema) {
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
    return new Layout(keyCols.clone(), vals, rowSchema);
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
    return valCols.length == 0 && isIdentity() ? row : row.select(keyCols);
  }

  public Row val(Row row) {
    return valCols.length == 0 ? Row.EMPTY : row.select(valCols);
  }

  private boolean isIdentity() {
    for (int i = 0; i < keyCols.length; i++) {
      if (keyCols[i] != i) {
        return false;
      }
    }
    return true;
  }

  public Row join(Row key, Row val) {
    if (valCols.length == 0 && isIdentity()) {
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
