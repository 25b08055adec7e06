package io.cairn.pgwire;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The shape of a statement a client sends: its text with holes, such as {@code WHERE c.oid =
 * '{oid}'}. A hole ({@code {name}}, letters only) matches any text, as little as possible; the
 * rest must match exactly (ignoring case) after both sides are {@linkplain #normalize normalized}.
 * Holes are then checked by the caller, usually with {@link #clauses}: a statement is answered
 * only when every part of it is understood.
 */
record QueryShape(String name, Pattern pattern, List<String> holes) {
  private static final Pattern HOLE = Pattern.compile("\\{([A-Za-z]+)\\}");

  /** A shape from its template (written as the client sends it; whitespace is free). */
  static QueryShape of(String name, String template) {
    String t = normalize(template);
    StringBuilder re = new StringBuilder("^");
    Matcher m = HOLE.matcher(t);
    List<String> holes = new ArrayList<>();
    int last = 0;
    while (m.find()) {
      holes.add(m.group(1));
      re.append(Pattern.quote(t.substring(last, m.start()))).append("(?<").append(m.group(1)).append(">.*?)");
      last = m.end();
    }
    re.append(Pattern.quote(t.substring(last))).append('$');
    return new QueryShape(name, Pattern.compile(re.toString(), Pattern.CASE_INSENSITIVE | Pattern.DOTALL), List.copyOf(holes));
  }

  /** The holes' text when {@code normalizedSql} has this shape. */
  Optional<Map<String, String>> match(String normalizedSql) {
    Matcher m = pattern.matcher(normalizedSql);
    if (!m.matches()) {
      return Optional.empty();
    }
    Map<String, String> values = new LinkedHashMap<>();
    for (String hole : holes) {
      values.put(hole, m.group(hole));
    }
    return Optional.of(values);
  }

  /**
   * {@code sql} with whitespace outside quotes collapsed to one space, none after {@code (} and
   * {@code ,} or before {@code )} and {@code ,}, none at either end, and no trailing semicolon. Quoted text
   * ({@code '...'}, {@code "..."}) is kept as it is.
   */
  static String normalize(String sql) {
    StringBuilder out = new StringBuilder(sql.length());
    int n = sql.length();
    boolean space = false;
    int i = 0;
    while (i < n) {
      char c = sql.charAt(i);
      if (Character.isWhitespace(c)) {
        space = true;
        i++;
        continue;
      }
      char prev = out.length() == 0 ? '(' : out.charAt(out.length() - 1);
      if (space && prev != '(' && prev != ',' && c != ')' && c != ',') {
        out.append(' ');
      }
      space = false;
      if (c == '\'' || c == '"') {
        int end = i + 1;
        while (end < n) {
          if (sql.charAt(end) == c) {
            if (end + 1 < n && sql.charAt(end + 1) == c) {
              end += 2;
              continue;
            }
            break;
          }
          end++;
        }
        end = Math.min(end + 1, n);
        out.append(sql, i, end);
        i = end;
      } else {
        out.append(c);
        i++;
      }
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
   * (ignoring case, each after an optional space); null when some part matches none of them.
   */
  static List<Clause> clauses(String text, List<Pattern> allowed) {
    List<Clause> out = new ArrayList<>();
    int pos = 0;
    while (pos < text.length()) {
      if (text.charAt(pos) == ' ') {
        pos++;
        continue;
      }
      Clause found = null;
      for (int k = 0; k < allowed.size() && found == null; k++) {
        Matcher m = allowed.get(k).matcher(text).region(pos, text.length());
        if (m.lookingAt() && m.end() > pos) {
          found = new Clause(k, m.toMatchResult());
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
  record Clause(int kind, java.util.regex.MatchResult match) {
    String group(int i) {
      return match.group(i);
    }
  }

  /** A clause pattern: {@code regex} ignoring case, with {@code .} matching anything. */
  static Pattern clause(String regex) {
    return Pattern.compile(regex, Pattern.CASE_INSENSITIVE | Pattern.DOTALL);
  }
}
