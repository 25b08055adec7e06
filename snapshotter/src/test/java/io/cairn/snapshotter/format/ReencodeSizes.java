package io.cairn.snapshotter.format;
import io.cairn.engine.row.*; import io.cairn.engine.trace.*;
import java.io.*; import java.nio.file.*; import java.util.*; import java.util.stream.*;
import org.apache.parquet.ParquetReadOptions; import org.apache.parquet.conf.PlainParquetConfiguration;
import org.apache.parquet.hadoop.ParquetFileReader; import org.apache.parquet.hadoop.metadata.*; import org.apache.parquet.io.LocalInputFile;
/**
 * Re-encodes every batch file under a directory with the per-value writer and the bulk encoder and
 * prints their sizes per column chunk (the check behind benchmarks/RESULTS.md, "Pages written in
 * bulk"): {@code java -cp <test classpath> io.cairn.snapshotter.format.ReencodeSizes <dir>}.
 */
public class ReencodeSizes {
  public static void main(String[] a) throws Exception {
    List<Path> files; try (Stream<Path> s = Files.walk(Path.of(a[0]))) { files = s.filter(p -> p.toString().endsWith(".parquet")).sorted().collect(Collectors.toList()); }
    long[] tot = new long[2]; long rowsTot = 0; Map<String, long[]> perCol = new TreeMap<>();
    for (Path p : files) {
      Map<String,String> m;
      try (ParquetFileReader rd = ParquetFileReader.open(new LocalInputFile(p), ParquetReadOptions.builder(new PlainParquetConfiguration()).build())) { m = rd.getFooter().getFileMetaData().getKeyValueMetaData(); }
      Schema key = Schema.parse(m.get("cairn.key-schema")), val = Schema.parse(m.get("cairn.val-schema"));
      byte[] bytes = Files.readAllBytes(p);
      long rows; try (ParquetFileReader rd = ParquetFileReader.open(new LocalInputFile(p), ParquetReadOptions.builder(new PlainParquetConfiguration()).build())) { rows = rd.getRecordCount(); }
      Batch b = ParquetBatchFiles.read(p.toString(), bytes, m.get("cairn.batch-id"), key, val,
          new Description(Long.parseLong(m.get("cairn.lower")), Long.parseLong(m.get("cairn.upper")), Long.parseLong(m.get("cairn.since"))), rows);
      rowsTot += rows;
      for (int pv = 0; pv < 2; pv++) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ColumnBatchWriter.write("a", 0, b, out, BatchFileOptions.defaults(), 0, pv == 0);
        tot[pv] += out.size();
        Path f = Files.createTempFile("s", ".parquet"); Files.write(f, out.toByteArray());
        try (ParquetFileReader rd = ParquetFileReader.open(new LocalInputFile(f), ParquetReadOptions.builder(new PlainParquetConfiguration()).build())) {
          for (BlockMetaData bl : rd.getFooter().getBlocks()) for (ColumnChunkMetaData c : bl.getColumns()) {
            long[] x = perCol.computeIfAbsent(c.getPath() + " " + c.getEncodings(), k -> new long[2]); x[pv] += c.getTotalSize(); }
        }
        Files.delete(f);
      }
      System.out.println(p.getFileName() + " " + rows + " rows");
    }
    System.out.printf("per-value %d bytes (%.4f B/row), bulk %d bytes (%.4f B/row)%n", tot[0], tot[0] / (double) rowsTot, tot[1], tot[1] / (double) rowsTot);
    perCol.forEach((k, v) -> System.out.println("  " + k + " per-value " + v[0] + " bulk " + v[1]));
  }
}
