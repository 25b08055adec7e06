package io.cairn.pgwire;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * The server side of SCRAM-SHA-256 (RFC 5802, RFC 7677) as PostgreSQL runs it over
 * AuthenticationSASL: no channel binding (SCRAM-SHA-256-PLUS is not offered: there is no TLS),
 * the user name in the client's message is ignored (the startup packet's is used), and the
 * password is used as UTF-8 without SASLprep (as PostgreSQL does for passwords that are not
 * valid SASLprep input). The salted password is derived once per listener with a random salt;
 * each exchange gets a fresh server nonce.
 *
 * <p>One {@link Exchange} per authentication attempt: {@link Exchange#serverFirst} answers the
 * client-first-message, {@link Exchange#serverFinal} checks the client's proof and returns the
 * server signature, or null when the proof is wrong.
 */
final class ScramSha256 {
  static final String MECHANISM = "SCRAM-SHA-256";
  static final int ITERATIONS = 4096;
  private static final Base64.Encoder B64 = Base64.getEncoder();
  private static final Base64.Decoder B64D = Base64.getDecoder();

  private final SecureRandom random = new SecureRandom();
  private final byte[] salt = new byte[16];
  private final byte[] storedKey;
  private final byte[] serverKey;

  ScramSha256(String password) {
    random.nextBytes(salt);
    try {
      SecretKeyFactory f = SecretKeyFactory.getInstance("PBKDF2WithHmacSHA256");
      char[] chars = password.toCharArray();
      byte[] salted = f.generateSecret(new PBEKeySpec(chars, salt, ITERATIONS, 256)).getEncoded();
      byte[] clientKey = hmac(salted, "Client Key");
      storedKey = MessageDigest.getInstance("SHA-256").digest(clientKey);
      serverKey = hmac(salted, "Server Key");
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("Cannot set up SCRAM-SHA-256: " + e.getMessage(), e);
    }
  }

  Exchange start() {
    byte[] n = new byte[18];
    random.nextBytes(n);
    return new Exchange(B64.encodeToString(n));
  }

  /** One authentication attempt. */
  final class Exchange {
    private final String serverNonce;
    private String clientFirstBare;
    private String serverFirst;
    private String gs2Header;
    private String nonce;

    private Exchange(String serverNonce) {
      this.serverNonce = serverNonce;
    }

    /** The server-first-message for a client-first-message ("n,,n=user,r=nonce"). */
    String serverFirst(String clientFirst) {
      if (!(clientFirst.startsWith("n,") || clientFirst.startsWith("y,"))) {
        throw new SqlStates.PgError(SqlStates.PROTOCOL_VIOLATION, "malformed SCRAM message (channel binding is not supported)", true);
      }
      int second = clientFirst.indexOf(',', 2);
      if (second < 0) {
        throw new SqlStates.PgError(SqlStates.PROTOCOL_VIOLATION, "malformed SCRAM message", true);
      }
      gs2Header = clientFirst.substring(0, second + 1);
      clientFirstBare = clientFirst.substring(second + 1);
      String clientNonce = attributes(clientFirstBare).get("r");
      if (clientNonce == null || clientNonce.isEmpty()) {
        throw new SqlStates.PgError(SqlStates.PROTOCOL_VIOLATION, "malformed SCRAM message (no nonce)", true);
      }
      nonce = clientNonce + serverNonce;
      serverFirst = "r=" + nonce + ",s=" + B64.encodeToString(salt) + ",i=" + ITERATIONS;
      return serverFirst;
    }

    /** The server-final-message ("v=signature") when the client's proof is right, else null. */
    String serverFinal(String clientFinal) {
      int p = clientFinal.lastIndexOf(",p=");
      if (serverFirst == null || p < 0) {
        throw new SqlStates.PgError(SqlStates.PROTOCOL_VIOLATION, "malformed SCRAM message", true);
      }
      String withoutProof = clientFinal.substring(0, p);
      Map<String, String> a = attributes(withoutProof);
      if (!nonce.equals(a.get("r"))
          || !B64.encodeToString(gs2Header.getBytes(StandardCharsets.UTF_8)).equals(a.get("c"))) {
        return null;
      }
      byte[] proof;
      try {
        proof = B64D.decode(clientFinal.substring(p + 3));
      } catch (IllegalArgumentException e) {
        return null;
      }
      String authMessage = clientFirstBare + "," + serverFirst + "," + withoutProof;
      try {
        byte[] clientSignature = hmac(storedKey, authMessage);
        if (proof.length != clientSignature.length) {
          return null;
        }
        byte[] clientKey = new byte[proof.length];
        for (int i = 0; i < proof.length; i++) {
          clientKey[i] = (byte) (proof[i] ^ clientSignature[i]);
        }
        if (!MessageDigest.isEqual(MessageDigest.getInstance("SHA-256").digest(clientKey), storedKey)) {
          return null;
        }
        return "v=" + B64.encodeToString(hmac(serverKey, authMessage));
      } catch (GeneralSecurityException e) {
        throw new IllegalStateException(e);
      }
    }
  }

  private static Map<String, String> attributes(String s) {
    Map<String, String> out = new HashMap<>();
    for (String part : s.split(",")) {
      if (part.length() >= 2 && part.charAt(1) == '=') {
        out.put(part.substring(0, 1), part.substring(2));
      }
    }
    return out;
  }

  private static byte[] hmac(byte[] key, String data) throws GeneralSecurityException {
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(key, "HmacSHA256"));
    return mac.doFinal(data.getBytes(StandardCharsets.UTF_8));
  }
}
