package io.cairn.pgwire;

import io.cairn.engine.sql.SqlScanner;
import io.cairn.engine.sql.SqlScanner.Token;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.MatchResult;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The shape of a statement a client sends: its text with holes, such as {@code WHERE c.oid =
 * '{oid}'}. A hole ({@code {name}}, letters only) matches any text, as little as possible; the
 * rest must match exactly (ignoring ASCII case) after both sides are {@linkplain #normalize
 * normalized}. Holes are then checked by the caller, usually with {@link #clauses}: a statement is
 * answered only when every part of it is understood.
 *
 * <p>Design: the text is read only through the engine's tokenizer ({@link SqlScanner}), and no
 * regular expression runs over a string literal, a quoted identifier or a comment. {@link #match}
 * compares the template's literal segments char by char and finds each hole's end by a search that
 * gives up on a start it has already seen fail, so it is linear in the statement (times the
 * number of holes), with a stack as deep as the number of holes. {@link #clauses} first replaces
 * every string literal and quoted identifier of the text by a short placeholder ({@link #STRING},
 * {@link #IDENTIFIER} in a clause's regex), so a clause regex sees only the structure around them;
 * {@link Clause#group} gives the original text back.
 */
record QueryShape(String name, List<String> segments, List<String> holes) {
  private static final Pattern HOLE = Pattern.compile("\\{([A-Za-z]+)\\}");
  private static final char STRING_MARK = '\u0001';
  private static final char IDENTIFIER_MARK = '\u0003';
  private static final char END_MARK = '\u0002';

  /** In a {@link #clause} regex: one string literal ({@code 'it''s'}), captured with its quotes by an enclosing group. */
  static final String STRING = STRING_MARK + "\\d+" + END_MARK;

  /** In a {@link #clause} regex: one quoted identifier ({@code "Name"}), captured with its quotes by an enclosing group. */
  static final String IDENTIFIER = IDENTIFIER_MARK + "\\d+" + END_MARK;

  QueryShape {
    segments = List.copyOf(segments);
    holes = List.copyOf(holes);
    if (segments.size() != holes.size() + 1) {
      throw new IllegalArgumentException("Cannot make query shape " + name + ": " + holes.size() + " holes need "
          + (holes.size() + 1) + " segments, not " + segments.size());
    }
  }

  /** A shape from its template (written as the client sends it; whitespace is free). */
  static QueryShape of(String name, String template) {
    String t = normalize(template);
    Matcher m = HOLE.matcher(t);
    List<String> holes = new ArrayList<>();
    List<String> segments = new ArrayList<>();
    int last = 0;
    while (m.find()) {
      holes.add(m.group(1));
      segments.add(t.substring(last, m.start()));
      last = m.end();
    }
    segments.add(t.substring(last));
    return new QueryShape(name, segments, holes);
  }

  /** The holes' text when {@code normalizedSql} has this shape. */
  Optional<Map<String, String>> match(String normalizedSql) {
    String s = normalizedSql;
    if (!matchesAt(s, 0, segments.get(0))) {
      return Optional.empty();
    }
    if (holes.isEmpty()) {
      return s.length() == segments.get(0).length() ? Optional.of(Map.of()) : Optional.empty();
    }
    int[] ends = new int[holes.size()];
    int[] failedFrom = new int[holes.size()];
    Arrays.fill(failedFrom, Integer.MAX_VALUE);
    if (!fill(s, 0, segments.get(0).length(), ends, failedFrom)) {
      return Optional.empty();
    }
    Map<String, String> values = new LinkedHashMap<>();
    int from = segments.get(0).length();
    for (int k = 0; k < holes.size(); k++) {
      values.put(holes.get(k), s.substring(from, ends[k]));
      from = ends[k] + segments.get(k + 1).length();
    }
    return Optional.of(values);
  }

  /**
   * Whether hole {@code k}, starting at {@code from}, and all that follows it match the rest of
   * {@code s}; on success {@code ends} holds where each hole from {@code k} on ends (the shortest
   * extent that lets the rest match, as a lazy regex group would). A start that failed once is
   * remembered in {@code failedFrom[k]}: any later start fails too, since it has fewer choices.
   */
  private boolean fill(String s, int k, int from, int[] ends, int[] failedFrom) {
    String next = segments.get(k + 1);
    if (k == holes.size() - 1) {
      int e = s.length() - next.length();
      if (e >= from && matchesAt(s, e, next)) {
        ends[k] = e;
        return true;
      }
      return false;
    }
    if (from >= failedFrom[k]) {
      return false;
    }
    int stop = Math.min(failedFrom[k] - 1, s.length() - next.length());
    for (int e = from; e <= stop; e++) {
      if (matchesAt(s, e, next) && fill(s, k + 1, e + next.length(), ends, failedFrom)) {
        ends[k] = e;
        return true;
      }
    }
    failedFrom[k] = from;
    return false;
  }

  /** Whether {@code segment} occurs in {@code s} at {@code at}, ignoring ASCII case (as a CASE_INSENSITIVE regex does). */
  private static boolean matchesAt(String s, int at, String segment) {
    if (at + segment.length() > s.length()) {
      return false;
    }
    for (int i = 0; i < segment.length(); i++) {
      char a = s.charAt(at + i);
      char b = segment.charAt(i);
      if (a != b && asciiLower(a) != asciiLower(b)) {
        return false;
      }
    }
    return true;
  }

  private static char asciiLower(char c) {
    return c >= 'A' && c <= 'Z' ? (char) (c + ('a' - 'A')) : c;
  }

  /**
   * {@code sql} with whitespace and comments outside quotes collapsed to one space, none after
   * {@code (} and {@code ,} or before {@code )} and {@code ,}, none at either end, and no trailing
   * semicolon. Quoted text ({@code '...'}, {@code "..."}) is kept as it is.
   */
  static String normalize(String sql) {
    StringBuilder out = new StringBuilder(sql.length());
    boolean space = false;
    for (Token t = SqlScanner.first(sql); t != null; t = t.next()) {
      if (t.isBlank()) {
        space = true;
        continue;
      }
      char c = sql.charAt(t.start());
      char prev = out.length() == 0 ? '(' : out.charAt(out.length() - 1);
      if (space && prev != '(' && prev != ',' && c != ')' && c != ',') {
        out.append(' ');
      }
      space = false;
      out.append(sql, t.start(), t.end());
    }
    int len = out.length();
    while (len > 0 && (out.charAt(len - 1) == ';' || out.charAt(len - 1) == ' ')) {
      len--;
    }
    out.setLength(len);
    return out.toString();
  }

  /**
   * {@code text} read as a sequence of clauses, each matching one of {@code allowed} in full
   * (ignoring case, each after an optional space); null when some part matches none of them, or
   * the text has an unclosed quote. In the patterns, {@link #STRING} and {@link #IDENTIFIER} stand
   * for one string literal and one quoted identifier.
   */
  static List<Clause> clauses(String text, List<Pattern> allowed) {
    Masked masked = Masked.of(text);
    if (masked == null) {
      return null;
    }
    String m = masked.text();
    List<Clause> out = new ArrayList<>();
    int pos = 0;
    while (pos < m.length()) {
      if (m.charAt(pos) == ' ') {
        pos++;
        continue;
      }
      Clause found = null;
      for (int k = 0; k < allowed.size() && found == null; k++) {
        Matcher matcher = allowed.get(k).matcher(m).region(pos, m.length());
        if (matcher.lookingAt() && matcher.end() > pos) {
          found = new Clause(k, matcher.toMatchResult(), masked);
        }
      }
      if (found == null) {
        return null;
      }
      out.add(found);
      pos = found.match().end();
    }
    return out;
  }

  /** One clause: which allowed pattern it matched, and how. */
  record Clause(int kind, MatchResult match, Masked masked) {
    /** Group {@code i} as the client wrote it (quoted text restored), null when it did not take part. */
    String group(int i) {
      String g = match.group(i);
      return g == null ? null : masked.restore(g);
    }
  }

  /** Text with its string literals and quoted identifiers replaced by numbered placeholders. */
  record Masked(String text, List<String> quoted) {
    /** {@code text} masked; null when it has an unclosed quote or a placeholder character of its own. */
    static Masked of(String text) {
      StringBuilder sb = new StringBuilder(text.length());
      List<String> quoted = new ArrayList<>();
      for (Token t = SqlScanner.first(text); t != null; t = t.next()) {
        SqlScanner.Kind kind = t.kind();
        if (kind == SqlScanner.Kind.STRING || kind == SqlScanner.Kind.QUOTED_IDENTIFIER) {
          if (!t.closed()) {
            return null;
          }
          sb.append(kind == SqlScanner.Kind.STRING ? STRING_MARK : IDENTIFIER_MARK).append(quoted.size()).append(END_MARK);
          quoted.add(t.text());
        } else {
          for (int i = t.start(); i < t.end(); i++) {
            char c = text.charAt(i);
            if (c == STRING_MARK || c == IDENTIFIER_MARK || c == END_MARK) {
              return null;
            }
            sb.append(c);
          }
        }
      }
      return new Masked(sb.toString(), List.copyOf(quoted));
    }

    /** A part of the masked text with its placeholders replaced by the quoted text they stand for. */
    String restore(String part) {
      StringBuilder sb = new StringBuilder(part.length());
      int i = 0;
      while (i < part.length()) {
        char c = part.charAt(i);
        int close = c == STRING_MARK || c == IDENTIFIER_MARK ? part.indexOf(END_MARK, i) : -1;
        if (close <= i + 1 || !part.substring(i + 1, close).chars().allMatch(d -> d >= '0' && d <= '9')) {
          sb.append(c);
          i++;
        } else {
          sb.append(quoted.get(Integer.parseInt(part, i + 1, close, 10)));
          i = close + 1;
        }
      }
      return sb.toString();
    }
  }

  /** A clause pattern: {@code regex} ignoring case, with {@code .} matching anything. */
  static Pattern clause(String regex) {
    return Pattern.compile(regex, Pattern.CASE_INSENSITIVE | Pattern.DOTALL);
  }
}
