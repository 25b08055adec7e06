package io.cairn.server.cli;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The S3 endpoint of the {@code class-cache} training run, and nothing else: an in-memory,
 * path-style subset of the S3 protocol (PUT with {@code If-None-Match: *}, GET with ranges, HEAD,
 * DELETE, ListObjectsV2, multi-object delete) on 127.0.0.1, so that a node of the training writes
 * and recovers a snapshot over the S3 client. Its point is the classes a real restart on S3 loads
 * (the client's request signing, response parsing, XML unmarshalling, retries and checksums):
 * aimed at a closed port, the client never parses a response, and a cold start on S3 then loaded
 * about a thousand classes outside the archive. It checks no signature and keeps no versions;
 * never a store for anything but the training.
 */
final class TrainingS3 implements AutoCloseable {
  private static final Pattern RANGE = Pattern.compile("bytes=(\\d+)-(\\d*)");
  private static final Pattern XML_KEY = Pattern.compile("<Key>(.*?)</Key>", Pattern.DOTALL);

  private final HttpServer server;
  private final Map<String, byte[]> objects = new ConcurrentSkipListMap<>();

  private TrainingS3(HttpServer server) {
    this.server = server;
  }

  static TrainingS3 start() throws IOException {
    HttpServer s = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    TrainingS3 t = new TrainingS3(s);
    s.createContext("/", t::handle);
    s.start();
    return t;
  }

  /** {@code http://127.0.0.1:<port>}: give it as the endpoint of an {@code s3://} store, path-style. */
  String endpoint() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  int objectCount() {
    return objects.size();
  }

  private void handle(HttpExchange x) throws IOException {
    try (x) {
      String path = x.getRequestURI().getPath().substring(1); // bucket[/key]
      int slash = path.indexOf('/');
      String bucket = slash < 0 ? path : path.substring(0, slash);
      String key = slash < 0 ? "" : path.substring(slash + 1);
      Map<String, String> query = query(x.getRequestURI().getRawQuery());
      byte[] body = x.getRequestBody().readAllBytes();
      switch (x.getRequestMethod()) {
        case "PUT" -> put(x, key, body);
        case "GET" -> {
          if (key.isEmpty()) {
            list(x, bucket, query.getOrDefault("prefix", ""));
          } else {
            get(x, key);
          }
        }
        case "HEAD" -> head(x, key);
        case "DELETE" -> {
          objects.remove(key);
          x.sendResponseHeaders(204, -1);
        }
        case "POST" -> {
          if (query.containsKey("delete")) {
            deleteMany(x, body);
          } else {
            error(x, 501, "NotImplemented", "the training endpoint does not do " + x.getRequestURI());
          }
        }
        default -> error(x, 405, "MethodNotAllowed", x.getRequestMethod());
      }
    }
  }

  private void put(HttpExchange x, String key, byte[] body) throws IOException {
    String encoding = String.valueOf(x.getRequestHeaders().getFirst("Content-Encoding"));
    String sha = String.valueOf(x.getRequestHeaders().getFirst("x-amz-content-sha256"));
    byte[] content = encoding.contains("aws-chunked") || sha.startsWith("STREAMING-") ? unchunk(body) : body;
    if (!"*".equals(x.getRequestHeaders().getFirst("If-None-Match"))) {
      objects.put(key, content);
    } else if (objects.putIfAbsent(key, content) != null) {
      error(x, 412, "PreconditionFailed", "At least one of the pre-conditions you specified did not hold");
      return;
    }
    x.getResponseHeaders().add("ETag", etag(content));
    x.sendResponseHeaders(200, -1);
  }

  private void get(HttpExchange x, String key) throws IOException {
    byte[] content = objects.get(key);
    if (content == null) {
      error(x, 404, "NoSuchKey", "The specified key does not exist.");
      return;
    }
    x.getResponseHeaders().add("ETag", etag(content));
    x.getResponseHeaders().add("Last-Modified", "Tue, 01 Dec 2026 00:00:00 GMT");
    String range = x.getRequestHeaders().getFirst("Range");
    Matcher m = range == null ? null : RANGE.matcher(range);
    if (m != null && m.matches()) {
      int from = (int) Math.min(Long.parseLong(m.group(1)), content.length);
      int to = m.group(2).isEmpty() ? content.length - 1 : (int) Math.min(Long.parseLong(m.group(2)), content.length - 1L);
      x.getResponseHeaders().add("Content-Range", "bytes " + from + "-" + to + "/" + content.length);
      send(x, 206, java.util.Arrays.copyOfRange(content, from, to + 1));
    } else {
      send(x, 200, content);
    }
  }

  private void head(HttpExchange x, String key) throws IOException {
    byte[] content = objects.get(key);
    if (content == null) {
      x.sendResponseHeaders(404, -1);
      return;
    }
    x.getResponseHeaders().add("ETag", etag(content));
    x.getResponseHeaders().add("Last-Modified", "Tue, 01 Dec 2026 00:00:00 GMT");
    x.getResponseHeaders().add("Content-Length", Integer.toString(content.length));
    x.sendResponseHeaders(200, -1);
  }

  private void list(HttpExchange x, String bucket, String prefix) throws IOException {
    StringBuilder xml = new StringBuilder("<?xml version=\"1.0\" encoding=\"UTF-8\"?>")
        .append("<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Name>").append(bucket)
        .append("</Name><Prefix>").append(escape(prefix)).append("</Prefix>");
    int n = 0;
    StringBuilder contents = new StringBuilder();
    for (Map.Entry<String, byte[]> e : objects.entrySet()) {
      if (e.getKey().startsWith(prefix)) {
        n++;
        contents.append("<Contents><Key>").append(escape(e.getKey())).append("</Key><LastModified>2026-12-01T00:00:00.000Z</LastModified><ETag>")
            .append(escape(etag(e.getValue()))).append("</ETag><Size>").append(e.getValue().length)
            .append("</Size><StorageClass>STANDARD</StorageClass></Contents>");
      }
    }
    xml.append("<KeyCount>").append(n).append("</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>")
        .append(contents).append("</ListBucketResult>");
    send(x, 200, xml.toString().getBytes(StandardCharsets.UTF_8));
  }

  private void deleteMany(HttpExchange x, byte[] body) throws IOException {
    StringBuilder xml = new StringBuilder("<?xml version=\"1.0\" encoding=\"UTF-8\"?><DeleteResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">");
    Matcher m = XML_KEY.matcher(new String(body, StandardCharsets.UTF_8));
    while (m.find()) {
      objects.remove(m.group(1));
      xml.append("<Deleted><Key>").append(m.group(1)).append("</Key></Deleted>");
    }
    send(x, 200, xml.append("</DeleteResult>").toString().getBytes(StandardCharsets.UTF_8));
  }

  private static void error(HttpExchange x, int status, String code, String message) throws IOException {
    send(x, status, ("<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>" + code + "</Code><Message>" + escape(message)
        + "</Message></Error>").getBytes(StandardCharsets.UTF_8));
  }

  private static void send(HttpExchange x, int status, byte[] body) throws IOException {
    x.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
    try (OutputStream os = x.getResponseBody()) {
      os.write(body);
    }
  }

  /** The payload of an {@code aws-chunked} body: {@code <hex size>[;ext]\r\n<data>\r\n}… up to a 0-size chunk and trailers. */
  static byte[] unchunk(byte[] body) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(body.length);
    int i = 0;
    while (i < body.length) {
      int eol = indexOf(body, i);
      if (eol < 0) {
        break;
      }
      String header = new String(body, i, eol - i, StandardCharsets.US_ASCII);
      int semi = header.indexOf(';');
      int size = Integer.parseInt((semi < 0 ? header : header.substring(0, semi)).trim(), 16);
      if (size == 0) {
        break; // trailers follow: checksums, which the training does not check
      }
      out.write(body, eol + 2, size);
      i = eol + 2 + size + 2;
    }
    return out.toByteArray();
  }

  private static int indexOf(byte[] a, int from) {
    for (int i = from; i + 1 < a.length; i++) {
      if (a[i] == '\r' && a[i + 1] == '\n') {
        return i;
      }
    }
    return -1;
  }

  private static Map<String, String> query(String raw) {
    Map<String, String> q = new LinkedHashMap<>();
    if (raw == null || raw.isEmpty()) {
      return q;
    }
    for (String part : raw.split("&")) {
      int eq = part.indexOf('=');
      String k = URLDecoder.decode(eq < 0 ? part : part.substring(0, eq), StandardCharsets.UTF_8);
      q.put(k, eq < 0 ? "" : URLDecoder.decode(part.substring(eq + 1), StandardCharsets.UTF_8));
    }
    return q;
  }

  private static String etag(byte[] content) {
    try {
      return "\"" + HexFormat.of().formatHex(MessageDigest.getInstance("MD5").digest(content)) + "\"";
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private static String escape(String s) {
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
