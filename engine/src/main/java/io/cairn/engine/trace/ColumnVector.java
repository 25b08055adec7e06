package io.cairn.engine.trace;

import io.cairn.engine.row.Row;
import io.cairn.engine.row.Type;
import java.util.Arrays;
import java.util.BitSet;

/**
 * One column of a {@link Batch}, stored in a primitive array (TEXT as an array of strings, NUMERIC
 * and INTERVAL as arrays of their value objects): BIGINT, TIMESTAMP and DATE in {@code long[]}
 * (or, for a large merge's output or a large loaded batch, in chunks of {@code long[]}: see {@link
 * Longs} and {@link LongsWriter}), DOUBLE in
 * {@code double[]}, BOOLEAN in {@code boolean[]}, with SQL NULLs in a bitmap. Immutable once built.
 */
public abstract sealed class ColumnVector
    permits ColumnVector.Longs, ColumnVector.Doubles, ColumnVector.Texts, ColumnVector.Values, ColumnVector.Booleans {

  final BitSet nulls;
  final int size;

  ColumnVector(BitSet nulls, int size) {
    this.nulls = nulls;
    this.size = size;
  }

  public int size() {
    return size;
  }

  public boolean isNull(int i) {
    return nulls != null && nulls.get(i);
  }

  /** Whether any of rows {@code [from, to)} is NULL (a scan of the bitmap's words, not of the rows). */
  public boolean hasNullIn(int from, int to) {
    if (nulls == null) {
      return false;
    }
    int i = nulls.nextSetBit(from);
    return i >= 0 && i < to;
  }

  /** The value at {@code i} as a row value (boxed), or null. */
  public abstract Object get(int i);

  public abstract Type type();

  /** Compares entry {@code i} with {@code value} (row representation), nulls first. */
  abstract int compareTo(int i, Object value);

  /** Compares entry {@code i} with entry {@code j} of {@code other} (same type), nulls first. */
  abstract int compare(int i, ColumnVector other, int j);

  /** Approximate heap bytes held by this vector. */
  public abstract long heapBytes();

  /** Creates a builder for a column of {@code type}. */
  public static Builder builder(Type type, int capacity) {
    return new Builder(type, capacity);
  }

  /**
   * BIGINT / TIMESTAMP column: one {@code long[]}, or, for a merge's output or a loaded batch of
   * more than {@link #CHUNKED_ABOVE} entries, chunks of {@link #CHUNK_ROWS} values ({@link #chunked},
   * {@link LongsWriter}). The JVM
   * zeroes a new array without reaching a safepoint, so one array of tens of millions of longs
   * stops every thread for as long as its pages take to fault in (measured: 10–2,283 ms); a chunk
   * takes well under a millisecond. Readers go through {@link #getLong}, which serves both forms.
   *
   * <p>A chunk is 512 KiB: small enough to be an ordinary object for the collectors (G1 takes an
   * array of half a region or more, Shenandoah one of a whole region, as a humongous object of
   * whole regions, and an array of 2^n longs plus its header would take twice its size in regions
   * of 2^n × 8 bytes: chunks of 8 MiB did, measured, and cost a quarter of the ingest rate).
   */
  public static final class Longs extends ColumnVector {
    /** log2 of the values per chunk of a chunked column (512 KiB chunks). */
    static final int CHUNK_SHIFT = 16;
    /** The values per chunk of a chunked column. */
    static final int CHUNK_ROWS = 1 << CHUNK_SHIFT;
    /**
     * A merge's output of up to this many entries keeps each column in one array (at most 8 MiB,
     * zeroed in a few milliseconds), and with it the one-array fast paths of comparisons and seeks.
     */
    static final int CHUNKED_ABOVE = 1 << 20;

    private final long[][] chunks;
    /** Value {@code i} is {@code chunks[i >>> shift][i & mask]}; one chunk: shift 31, mask all ones. */
    private final int shift;
    private final int mask;
    private final Type type;

    public Longs(Type type, long[] values, BitSet nulls, int size) {
      super(nulls, size);
      this.type = type;
      this.chunks = new long[][] {values};
      this.shift = 31;
      this.mask = Integer.MAX_VALUE;
    }

    private Longs(Type type, long[][] chunks, int shift, BitSet nulls, int size) {
      super(nulls, size);
      this.type = type;
      this.chunks = chunks;
      this.shift = shift;
      this.mask = (1 << shift) - 1;
    }

    /**
     * A column without NULLs of {@code size} values held in {@code chunks} of {@code 1 << shift}
     * values each (the last may be shorter, but covers {@code size}).
     */
    static Longs chunked(Type type, long[][] chunks, int shift, int size) {
      return chunked(type, chunks, shift, null, size);
    }

    /** {@link #chunked(Type, long[][], int, int)} with SQL NULLs at the set bits of {@code nulls} (null: none). */
    static Longs chunked(Type type, long[][] chunks, int shift, BitSet nulls, int size) {
      if (shift < 1 || shift > 30 || (long) chunks.length << shift < size) {
        throw new IllegalArgumentException("Cannot make a chunked column of " + size + " values from " + chunks.length
            + " chunks of 2^" + shift);
      }
      return new Longs(type, chunks, shift, nulls, size);
    }

    public long getLong(int i) {
      return chunks[i >>> shift][i & mask];
    }

    /**
     * Copies the values of rows {@code [from, to)} (0 at NULL rows) into {@code dst} from {@code
     * at}: one array copy per chunk the rows span.
     */
    public void copyTo(int from, int to, long[] dst, int at) {
      int i = from;
      while (i < to) {
        int c = i >>> shift;
        int o = i & mask;
        int n = (int) Math.min(to - i, (long) mask - o + 1);
        System.arraycopy(chunks[c], o, dst, at, n);
        at += n;
        i += n;
      }
    }

    /** The values array (entries at null positions are 0) when the column is one array, else null; do not modify. */
    long[] longs() {
      return shift == 31 ? chunks[0] : null;
    }

    /** Whether the values are held in chunks ({@link #chunked}) rather than one array. */
    public boolean isChunked() {
      return shift != 31;
    }

    /** The chunks (one when {@link #longs()} is not null); do not modify. */
    long[][] chunks() {
      return chunks;
    }

    /** log2 of the values per chunk; 31 when the column is one array. */
    int chunkShift() {
      return shift;
    }

    @Override
    public Object get(int i) {
      return isNull(i) ? null : getLong(i);
    }

    @Override
    public Type type() {
      return type;
    }

    @Override
    int compareTo(int i, Object value) {
      if (isNull(i)) {
        return value == null ? 0 : -1;
      }
      return value == null ? 1 : Long.compare(getLong(i), (Long) value);
    }

    @Override
    int compare(int i, ColumnVector other, int j) {
      boolean an = isNull(i);
      boolean bn = other.isNull(j);
      if (an || bn) {
        return Boolean.compare(!an, !bn);
      }
      return Long.compare(getLong(i), ((Longs) other).getLong(j));
    }

    @Override
    public long heapBytes() {
      long b = 16L + 16L * chunks.length + (nulls == null ? 0 : nulls.size() / 8);
      for (long[] c : chunks) {
        b += 8L * c.length;
      }
      return b;
    }
  }

  /** DOUBLE column. */
  public static final class Doubles extends ColumnVector {
    private final double[] values;

    public Doubles(double[] values, BitSet nulls, int size) {
      super(nulls, size);
      this.values = values;
    }

    public double getDouble(int i) {
      return values[i];
    }

    @Override
    public Object get(int i) {
      return isNull(i) ? null : values[i];
    }

    @Override
    public Type type() {
      return Type.DOUBLE;
    }

    @Override
    int compareTo(int i, Object value) {
      if (isNull(i)) {
        return value == null ? 0 : -1;
      }
      return value == null ? 1 : Double.compare(values[i], (Double) value);
    }

    @Override
    int compare(int i, ColumnVector other, int j) {
      boolean an = isNull(i);
      boolean bn = other.isNull(j);
      if (an || bn) {
        return Boolean.compare(!an, !bn);
      }
      return Double.compare(values[i], ((Doubles) other).values[j]);
    }

    @Override
    public long heapBytes() {
      return 16L + 8L * values.length + (nulls == null ? 0 : nulls.size() / 8);
    }
  }

  /** TEXT column; nulls are null references. */
  public static final class Texts extends ColumnVector {
    private final String[] values;
    /** {@link #heapBytes}, computed on first use (a walk over every string; the vector is immutable). */
    private volatile long heapBytes = -1;

    public Texts(String[] values, int size) {
      super(null, size);
      this.values = values;
    }

    @Override
    public boolean isNull(int i) {
      return values[i] == null;
    }

    @Override
    public Object get(int i) {
      return values[i];
    }

    @Override
    public Type type() {
      return Type.TEXT;
    }

    @Override
    int compareTo(int i, Object value) {
      return value == null || value instanceof String
          ? compareText(values[i], (String) value)
          : Row.compareValues(values[i], value);
    }

    @Override
    int compare(int i, ColumnVector other, int j) {
      return compareText(values[i], ((Texts) other).values[j]);
    }

    /**
     * The rank of each of the first {@code n} values among the distinct ones, in their order (NULL
     * first, rank 0): equal values have equal ranks, and {@code rank[i] < rank[j]} exactly when
     * value i sorts before value j. Each distinct value is compared with others only while the
     * distinct values are sorted.
     */
    long[] ranks(int n) {
      java.util.HashMap<String, Integer> ids = new java.util.HashMap<>();
      java.util.ArrayList<String> distinct = new java.util.ArrayList<>();
      int[] id = new int[n];
      for (int i = 0; i < n; i++) {
        String v = values[i];
        if (v == null) {
          id[i] = -1;
          continue;
        }
        Integer x = ids.get(v);
        if (x == null) {
          x = distinct.size();
          ids.put(v, x);
          distinct.add(v);
        }
        id[i] = x;
      }
      Integer[] order = new Integer[distinct.size()];
      for (int i = 0; i < order.length; i++) {
        order[i] = i;
      }
      java.util.Arrays.sort(order, (a, b) -> distinct.get(a).compareTo(distinct.get(b)));
      long[] rankOf = new long[order.length];
      for (int r = 0; r < order.length; r++) {
        rankOf[order[r]] = r + 1; // distinct strings never compare equal
      }
      long[] rank = new long[n];
      for (int i = 0; i < n; i++) {
        rank[i] = id[i] < 0 ? 0 : rankOf[id[i]];
      }
      return rank;
    }

    /**
     * {@link Row#compareValues} for two strings (nulls first), without its type tests: equal values
     * the source decoded once are one object, and end at the identity check.
     */
    private static int compareText(String a, String b) {
      if (a == b) {
        return 0;
      }
      if (a == null) {
        return -1;
      }
      return b == null ? 1 : a.compareTo(b);
    }

    @Override
    public long heapBytes() {
      long b = heapBytes;
      if (b < 0) {
        b = 16L + 4L * values.length;
        for (int i = 0; i < size; i++) {
          if (values[i] != null) {
            b += 40 + values[i].length();
          }
        }
        heapBytes = b; // racing callers compute the same figure
      }
      return b;
    }
  }

  /** NUMERIC or INTERVAL column: the value objects ({@link java.math.BigDecimal}, {@link io.cairn.engine.row.Interval}); nulls are null references. */
  public static final class Values extends ColumnVector {
    private final Object[] values;
    private final Type type;

    public Values(Type type, Object[] values, int size) {
      super(null, size);
      if (type != Type.NUMERIC && type != Type.INTERVAL) {
        throw new IllegalArgumentException("Cannot make a value-object column of " + type);
      }
      this.type = type;
      this.values = values;
    }

    @Override
    public boolean isNull(int i) {
      return values[i] == null;
    }

    @Override
    public Object get(int i) {
      return values[i];
    }

    @Override
    public Type type() {
      return type;
    }

    @Override
    int compareTo(int i, Object value) {
      return Row.compareValues(values[i], value);
    }

    @Override
    int compare(int i, ColumnVector other, int j) {
      return Row.compareValues(values[i], ((Values) other).values[j]);
    }

    @Override
    public long heapBytes() {
      long b = 16L + 4L * values.length;
      for (int i = 0; i < size; i++) {
        Object v = values[i];
        if (v instanceof java.math.BigDecimal d) {
          b += 40 + (d.precision() > 18 ? 40 : 0); // the object; a BigInteger beyond a long
        } else if (v != null) {
          b += 32; // an Interval: header, two ints, a long
        }
      }
      return b;
    }
  }

  /** BOOLEAN column (and the all-null NULL type). */
  public static final class Booleans extends ColumnVector {
    private final boolean[] values;
    private final Type type;

    public Booleans(Type type, boolean[] values, BitSet nulls, int size) {
      super(nulls, size);
      this.type = type;
      this.values = values;
    }

    public boolean getBoolean(int i) {
      return values[i];
    }

    @Override
    public Object get(int i) {
      return isNull(i) ? null : values[i];
    }

    @Override
    public Type type() {
      return type;
    }

    @Override
    int compareTo(int i, Object value) {
      if (isNull(i)) {
        return value == null ? 0 : -1;
      }
      return value == null ? 1 : Boolean.compare(values[i], (Boolean) value);
    }

    @Override
    int compare(int i, ColumnVector other, int j) {
      boolean an = isNull(i);
      boolean bn = other.isNull(j);
      if (an || bn) {
        return Boolean.compare(!an, !bn);
      }
      return Boolean.compare(values[i], ((Booleans) other).values[j]);
    }

    @Override
    public long heapBytes() {
      return 16L + values.length + (nulls == null ? 0 : nulls.size() / 8);
    }
  }

  /** Appends values of one type; {@link #build()} trims the arrays to size. */
  /**
   * Fills a BIGINT/TIMESTAMP/DATE column whose size is known in advance (a batch file's rows) in
   * ranges of rows, in any order, then makes it a {@link Longs}: one array up to {@link
   * Longs#CHUNKED_ABOVE} values, chunks of {@link Longs#CHUNK_ROWS} above, as a merge's output is
   * kept. A column loaded from a snapshot is therefore held like one a merge made, and loading
   * tens of millions of rows never allocates (zeroes) one array of them: the JVM does that without
   * reaching a safepoint, and every other thread waits for it (measured in a load of 45M rows per
   * shard: safepoints waiting up to 149 ms for a thread). A chunk is allocated when a range first
   * reaches it; a range that covers it whole, from a source array, is copied as it is allocated,
   * which lets the JIT skip zeroing it.
   */
  public static final class LongsWriter {
    private final Type type;
    private final int size;
    /** The one array, when the column is not chunked, else null. */
    private final long[] array;
    private final long[][] chunks;
    private final int shift;

    /** A writer of a column of {@code size} values of {@code type}, every one 0 until written. */
    public LongsWriter(Type type, int size) {
      this(type, size, Longs.CHUNK_SHIFT, Longs.CHUNKED_ABOVE);
    }

    /** As {@link #LongsWriter(Type, int)}, chunked in {@code 1 << shift} values above {@code chunkedAbove} (tests choose small ones). */
    LongsWriter(Type type, int size, int shift, int chunkedAbove) {
      if (size < 0) {
        throw new IllegalArgumentException("Cannot write a column of " + size + " values");
      }
      this.type = type;
      this.size = size;
      if (size <= chunkedAbove) {
        this.array = new long[size];
        this.chunks = null;
        this.shift = 31;
      } else {
        this.array = null;
        this.chunks = new long[(int) ((size + (1L << shift) - 1) >>> shift)][];
        this.shift = shift;
      }
    }

    /**
     * The column's one array, to write into directly, when it is not chunked; null when it is
     * (write through {@link #copyFrom}, {@link #fill} and {@link #set}).
     */
    public long[] arrayOrNull() {
      return array;
    }

    /** Sets row {@code i} to {@code v}. */
    public void set(int i, long v) {
      if (array != null) {
        array[i] = v;
      } else {
        chunk(i >>> shift)[i & ((1 << shift) - 1)] = v;
      }
    }

    /** Sets rows {@code [at, at + n)} to {@code src[from, from + n)}. */
    public void copyFrom(long[] src, int from, int at, int n) {
      java.util.Objects.checkFromIndexSize(at, n, size);
      if (array != null) {
        System.arraycopy(src, from, array, at, n);
        return;
      }
      int mask = (1 << shift) - 1;
      int end = at + n;
      while (at < end) {
        int c = at >>> shift;
        int o = at & mask;
        int len = chunkLength(c);
        int k = Math.min(end - at, len - o);
        if (chunks[c] == null && o == 0 && k == len) {
          chunks[c] = Arrays.copyOfRange(src, from, from + len);
        } else {
          System.arraycopy(src, from, chunk(c), o, k);
        }
        at += k;
        from += k;
      }
    }

    /** Sets rows {@code [from, to)} to {@code v}. */
    public void fill(int from, int to, long v) {
      java.util.Objects.checkFromToIndex(from, to, size);
      if (array != null) {
        Arrays.fill(array, from, to, v);
        return;
      }
      int mask = (1 << shift) - 1;
      while (from < to) {
        int c = from >>> shift;
        int o = from & mask;
        int k = Math.min(to - from, chunkLength(c) - o);
        Arrays.fill(chunk(c), o, o + k, v);
        from += k;
      }
    }

    private int chunkLength(int c) {
      return (int) Math.min(1L << shift, size - ((long) c << shift));
    }

    private long[] chunk(int c) {
      long[] chunk = chunks[c];
      if (chunk == null) {
        chunk = new long[chunkLength(c)];
        chunks[c] = chunk;
      }
      return chunk;
    }

    /** The column, with SQL NULLs at the set bits of {@code nulls} (null or empty: none). The writer must not be used afterwards. */
    public Longs build(BitSet nulls) {
      BitSet n = nulls == null || nulls.isEmpty() ? null : nulls;
      if (array != null) {
        return new Longs(type, array, n, size);
      }
      for (int c = 0; c < chunks.length; c++) {
        chunk(c); // a row never written is 0, as in one array
      }
      return Longs.chunked(type, chunks, shift, n, size);
    }
  }

  public static final class Builder {
    private final Type type;
    private long[] longs;
    private double[] doubles;
    private String[] texts;
    private Object[] objects;
    private boolean[] booleans;
    private BitSet nulls;
    private int size;

    Builder(Type type, int capacity) {
      this.type = type;
      int cap = Math.max(capacity, 4);
      switch (type) {
        case BIGINT, TIMESTAMP, DATE -> longs = new long[cap];
        case DOUBLE -> doubles = new double[cap];
        case TEXT -> texts = new String[cap];
        case NUMERIC, INTERVAL -> objects = new Object[cap];
        case BOOLEAN, NULL -> booleans = new boolean[cap];
      }
    }

    public int size() {
      return size;
    }

    private void grow() {
      growTo(Math.max(8, size * 2));
    }

    /** Makes room for {@code more} values beyond the current ones. */
    void reserve(int more) {
      if (size + more > capacity()) {
        growTo(Math.max(size + more, size * 2));
      }
    }

    private void growTo(int cap) {
      if (longs != null) {
        longs = Arrays.copyOf(longs, cap);
      } else if (doubles != null) {
        doubles = Arrays.copyOf(doubles, cap);
      } else if (texts != null) {
        texts = Arrays.copyOf(texts, cap);
      } else if (objects != null) {
        objects = Arrays.copyOf(objects, cap);
      } else {
        booleans = Arrays.copyOf(booleans, cap);
      }
    }

    private int capacity() {
      if (longs != null) {
        return longs.length;
      } else if (doubles != null) {
        return doubles.length;
      } else if (texts != null) {
        return texts.length;
      } else if (objects != null) {
        return objects.length;
      }
      return booleans.length;
    }

    /** Appends a row value (must match the type). */
    public void add(Object value) {
      if (size == capacity()) {
        grow();
      }
      if (value == null) {
        if (texts == null && objects == null) {
          if (nulls == null) {
            nulls = new BitSet();
          }
          nulls.set(size);
        }
      } else {
        switch (type) {
          case BIGINT, TIMESTAMP, DATE -> longs[size] = (Long) value;
          case DOUBLE -> doubles[size] = (Double) value;
          case TEXT -> texts[size] = (String) value;
          case NUMERIC -> objects[size] = (java.math.BigDecimal) value;
          case INTERVAL -> objects[size] = (io.cairn.engine.row.Interval) value;
          case BOOLEAN -> booleans[size] = (Boolean) value;
          case NULL -> throw new IllegalArgumentException("Cannot store " + value + " in a NULL column");
        }
      }
      size++;
    }

    /** Appends a non-null BIGINT/TIMESTAMP value without boxing. */
    public void addLong(long value) {
      if (size == capacity()) {
        grow();
      }
      longs[size++] = value;
    }

    /** Appends a non-null DOUBLE value without boxing. */
    public void addDouble(double value) {
      if (size == capacity()) {
        grow();
      }
      doubles[size++] = value;
    }

    /** Appends entry {@code i} of {@code from} (same type) without boxing. */
    public void addFrom(ColumnVector from, int i) {
      if (from.isNull(i)) {
        add(null);
        return;
      }
      if (size == capacity()) {
        grow();
      }
      switch (type) {
        case BIGINT, TIMESTAMP, DATE -> longs[size] = ((Longs) from).getLong(i);
        case DOUBLE -> doubles[size] = ((Doubles) from).values[i];
        case TEXT -> texts[size] = ((Texts) from).values[i];
        case NUMERIC, INTERVAL -> objects[size] = ((Values) from).values[i];
        case BOOLEAN, NULL -> booleans[size] = ((Booleans) from).values[i];
      }
      size++;
    }

    /** Removes the last entry. */
    public void pop() {
      size--;
      if (nulls != null) {
        nulls.clear(size);
      }
      if (texts != null) {
        texts[size] = null;
      }
      if (objects != null) {
        objects[size] = null;
      }
    }

    /**
     * The vector of the values appended, trimmed to their number (the array itself when it is
     * exactly full: no copy). The builder must not be used afterwards.
     */
    public ColumnVector build() {
      BitSet n = nulls == null || nulls.isEmpty() ? null : nulls;
      return switch (type) {
        case BIGINT, TIMESTAMP, DATE -> new Longs(type, longs.length == size ? longs : Arrays.copyOf(longs, size), n, size);
        case DOUBLE -> new Doubles(doubles.length == size ? doubles : Arrays.copyOf(doubles, size), n, size);
        case TEXT -> new Texts(texts.length == size ? texts : Arrays.copyOf(texts, size), size);
        case NUMERIC, INTERVAL -> new Values(type, objects.length == size ? objects : Arrays.copyOf(objects, size), size);
        case BOOLEAN, NULL -> new Booleans(type, booleans.length == size ? booleans : Arrays.copyOf(booleans, size), n, size);
      };
    }

    /**
     * A vector over the builder's arrays as they are, not trimmed (entries {@code [0, size())};
     * {@link ColumnVector#heapBytes} counts the whole array): for a transient use, such as the
     * staged updates a seal sorts. The builder must not be used afterwards.
     */
    ColumnVector buildUntrimmed() {
      BitSet n = nulls == null || nulls.isEmpty() ? null : nulls;
      return switch (type) {
        case BIGINT, TIMESTAMP, DATE -> new Longs(type, longs, n, size);
        case DOUBLE -> new Doubles(doubles, n, size);
        case TEXT -> new Texts(texts, size);
        case NUMERIC, INTERVAL -> new Values(type, objects, size);
        case BOOLEAN, NULL -> new Booleans(type, booleans, n, size);
      };
    }
  }
}
