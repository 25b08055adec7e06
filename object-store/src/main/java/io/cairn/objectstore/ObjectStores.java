package io.cairn.objectstore;

import io.cairn.objectstore.exceptions.ObjectStoreConfigException;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Opens a store from a URI, the form used in configuration:
 * <ul>
 *   <li>{@code file:///path/to/dir} — a {@link LocalObjectStore} over an existing directory
 *       (add {@code ?create=true} to create it);
 *   <li>{@code s3://bucket/prefix?endpoint=http://127.0.0.1:9000&path-style-access=true&region=...}
 *       — an {@link S3ObjectStore}; query parameters are the {@link S3ObjectStoreConfig.Keys}
 *       without their "s3." ({@code endpoint}, {@code region}, {@code path-style-access},
 *       {@code checksum-mode}, {@code multipart.part-size-bytes}, {@code sse}, ...). Credentials
 *       are refused in the URI (they would end up in logs); pass them as properties or use the
 *       SDK's default provider chain;
 *   <li>{@code memory:} — a fresh {@link InMemoryObjectStore}.
 * </ul>
 */
public final class ObjectStores {
  private ObjectStores() {}

  public static ObjectStore open(String uri) {
    return open(uri, Map.of());
  }

  public static ObjectStore open(String uri, Map<String, String> properties) {
    if (uri != null && uri.equalsIgnoreCase("memory:")) {
      return new InMemoryObjectStore();
    }
    try {
      return open(new URI(uri), properties);
    } catch (java.net.URISyntaxException e) {
      throw new ObjectStoreConfigException("Invalid object store URI '" + redact(uri) + "': " + e.getReason());
    }
  }

  /**
   * Opens the store {@code uri} names. {@code properties} (keys of {@link S3ObjectStoreConfig.Keys})
   * apply to S3 stores; the URI's query parameters override them.
   */
  public static ObjectStore open(URI uri, Map<String, String> properties) {
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    Map<String, String> query = query(uri);
    return switch (scheme) {
      case "file" -> {
        if (uri.getAuthority() != null && !uri.getAuthority().isEmpty()) {
          throw new ObjectStoreConfigException(
              "Invalid object store URI '" + uri + "': expected file:///absolute/path (three slashes)");
        }
        if (!properties.isEmpty()) {
          throw new ObjectStoreConfigException("Invalid store properties " + new java.util.TreeSet<>(properties.keySet())
              + " for " + uri + ": a file:// store uses none (they apply to s3:// stores)");
        }
        Path root = Path.of(uri.getPath());
        yield "true".equalsIgnoreCase(query.get("create"))
            ? LocalObjectStore.createDirectories(root) : new LocalObjectStore(root);
      }
      case "s3" -> new S3ObjectStore(s3Config(uri, properties));
      case "memory" -> new InMemoryObjectStore();
      default -> throw new ObjectStoreConfigException("Invalid object store URI '" + redact(uri.toString())
          + "': scheme must be file, s3 or memory");
    };
  }

  /** The S3 configuration a {@code s3://} URI and properties describe. */
  public static S3ObjectStoreConfig s3Config(URI uri, Map<String, String> properties) {
    if (!"s3".equalsIgnoreCase(uri.getScheme())) {
      throw new ObjectStoreConfigException("Invalid S3 URI '" + redact(uri.toString()) + "': scheme must be s3");
    }
    if (uri.getRawUserInfo() != null) {
      throw new ObjectStoreConfigException("Invalid S3 URI for bucket " + uri.getHost()
          + ": credentials must not be in the URI; use properties or the default provider chain");
    }
    String bucket = uri.getHost();
    if (bucket == null) {
      throw new ObjectStoreConfigException("Invalid S3 URI '" + redact(uri.toString()) + "': no bucket (expected s3://bucket/prefix)");
    }
    String path = uri.getPath() == null ? "" : uri.getPath();
    String prefix = path.replaceAll("^/+", "").replaceAll("/+$", "");
    Map<String, String> props = new HashMap<>(properties);
    for (Map.Entry<String, String> e : query(uri).entrySet()) {
      String key = e.getKey().startsWith("s3.") ? e.getKey() : "s3." + e.getKey();
      if (key.equals(S3ObjectStoreConfig.Keys.SECRET_ACCESS_KEY) || key.equals(S3ObjectStoreConfig.Keys.ACCESS_KEY_ID)) {
        throw new ObjectStoreConfigException("Invalid S3 URI for bucket " + bucket + ": parameter '" + e.getKey()
            + "' is not allowed in a URI (it would be logged); pass credentials as properties");
      }
      props.put(key, e.getValue());
    }
    if (props.containsKey(S3ObjectStoreConfig.Keys.ENDPOINT) && !props.containsKey(S3ObjectStoreConfig.Keys.PATH_STYLE)) {
      // S3-compatible servers behind an endpoint override nearly always want path-style addressing
      props.put(S3ObjectStoreConfig.Keys.PATH_STYLE, "true");
    }
    return S3ObjectStoreConfig.fromProperties(bucket, prefix, props);
  }

  private static Map<String, String> query(URI uri) {
    Map<String, String> result = new HashMap<>();
    String raw = uri.getRawQuery();
    if (raw == null || raw.isEmpty()) {
      return result;
    }
    for (String pair : raw.split("&")) {
      if (pair.isEmpty()) {
        continue;
      }
      int eq = pair.indexOf('=');
      String k = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
      String v = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
      result.put(k, v);
    }
    return result;
  }

  private static String redact(String uri) {
    return uri.replaceAll("(?i)(secret[^=&]*=)[^&]*", "$1****").replaceAll("//[^/@]*@", "//****@");
  }
}
