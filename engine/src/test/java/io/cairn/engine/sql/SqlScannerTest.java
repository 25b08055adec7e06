package io.cairn.engine.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.sql.SqlScanner.Kind;
import io.cairn.engine.sql.SqlScanner.Token;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The one tokenizer: kinds and spans, coverage of any text, linear handling of long tokens. */
class SqlScannerTest {
  private static List<String> kinds(String sql) {
    return SqlScanner.tokens(sql).stream().map(t -> t.kind() + ":" + t.text()).toList();
  }

  @Test
  void tokensHaveKindsAndSpans() {
    assertThat(kinds("SELECT a_1, 'it''s' -- c\n\"Q\"\"x\" /* b */ 1.5 $2 x$3 ::"))
        .containsExactly("WORD:SELECT", "WHITESPACE: ", "WORD:a_1", "SYMBOL:,", "WHITESPACE: ", "STRING:'it''s'",
            "WHITESPACE: ", "COMMENT:-- c", "WHITESPACE:\n", "QUOTED_IDENTIFIER:\"Q\"\"x\"", "WHITESPACE: ",
            "COMMENT:/* b */", "WHITESPACE: ", "NUMBER:1.5", "WHITESPACE: ", "PARAMETER:$2", "WHITESPACE: ", "WORD:x",
            "SYMBOL:$", "NUMBER:3", "WHITESPACE: ", "SYMBOL::", "SYMBOL::");
    Token s = SqlScanner.significant("  'it''s' x", 0);
    assertThat(s.kind()).isEqualTo(Kind.STRING);
    assertThat(s.start()).isEqualTo(2);
    assertThat(s.end()).isEqualTo(9);
    assertThat(s.value()).isEqualTo("it's");
    assertThat(s.nextSignificant().isWord("X")).isTrue();
    assertThat(SqlScanner.firstWord("-- note\n /* c */ SeLeCt 1")).isEqualTo("select");
    assertThat(SqlScanner.firstWord("(SELECT 1)")).isEmpty();
  }

  @Test
  void unclosedQuotesAndCommentsRunToTheEnd() {
    assertThat(SqlScanner.tokens("a 'b''c").get(2)).satisfies(t -> {
      assertThat(t.kind()).isEqualTo(Kind.STRING);
      assertThat(t.closed()).isFalse();
      assertThat(t.end()).isEqualTo(7);
      assertThat(t.value()).isEqualTo("b'c");
    });
    assertThat(SqlScanner.tokens("a /* b ; 'c").get(2).closed()).isFalse();
    assertThat(SqlScanner.tokens("a \"b").get(2).kind()).isEqualTo(Kind.QUOTED_IDENTIFIER);
    assertThat(SqlScanner.tokens("-- only").get(0).closed()).isTrue();
  }

  /** Any text, however malformed, is covered by non-empty tokens that meet end to start. */
  @Test
  void tokensCoverAnyText() {
    long seed = new Random().nextLong();
    Random r = new Random(seed);
    String alphabet = "ab_1.$'\"-/*;: \n\t(),é";
    for (int round = 0; round < 2000; round++) {
      StringBuilder sb = new StringBuilder();
      int len = r.nextInt(40);
      for (int i = 0; i < len; i++) {
        sb.append(alphabet.charAt(r.nextInt(alphabet.length())));
      }
      String sql = sb.toString();
      int at = 0;
      StringBuilder again = new StringBuilder();
      for (Token t : SqlScanner.tokens(sql)) {
        assertThat(t.start()).as("seed %d, text %s", seed, sql).isEqualTo(at);
        assertThat(t.end()).as("seed %d, text %s", seed, sql).isGreaterThan(t.start());
        again.append(t.text());
        at = t.end();
      }
      assertThat(at).as("seed %d, text %s", seed, sql).isEqualTo(sql.length());
      assertThat(again.toString()).isEqualTo(sql);
    }
  }

  /** A megabyte literal or comment is one token (no recursion, one pass). */
  @Test
  void megabyteLiteralAndCommentAreOneToken() {
    String big = "x'".repeat(1 << 19);
    String sql = "SELECT '" + big.replace("'", "''") + "' /*" + big + "*/ --" + big + "\n;";
    List<Token> tokens = SqlScanner.tokens(sql);
    assertThat(tokens).extracting(Token::kind).containsExactly(Kind.WORD, Kind.WHITESPACE, Kind.STRING, Kind.WHITESPACE,
        Kind.COMMENT, Kind.WHITESPACE, Kind.COMMENT, Kind.WHITESPACE, Kind.SYMBOL);
    assertThat(tokens.get(2).value()).isEqualTo(big);
    assertThat(Statements.split(sql)).hasSize(1);
  }

  @Test
  void lexerCountsLinesAcrossCommentsAndRefusesUnterminatedText() {
    List<Lexer.Token> ts = Lexer.tokenize("DROP /* a\nb */ VIEW\n  -- x\n  v $1");
    assertThat(ts).extracting(Lexer.Token::text).containsExactly("drop", "view", "v", "$1", "");
    assertThat(ts.get(1).line()).isEqualTo(2);
    assertThat(ts.get(1).column()).isEqualTo(6);
    assertThat(ts.get(2).line()).isEqualTo(4);
    assertThat(ts.get(2).column()).isEqualTo(3);
    assertThat(ts.get(3).kind()).isEqualTo(Lexer.Kind.PARAMETER);
    assertThatThrownBy(() -> Lexer.tokenize("SHOW 'a\nb")).isInstanceOf(SqlException.class).hasMessageContaining("unterminated string");
  }
}
