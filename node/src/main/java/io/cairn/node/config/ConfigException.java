package io.cairn.node.config;

/** A configuration error; the message names the key and what was wrong. */
public class ConfigException extends RuntimeException {
  public ConfigException(String message) {
    super(message);
  }
}
