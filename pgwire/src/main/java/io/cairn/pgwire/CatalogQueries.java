package io.cairn.pgwire;

import io.cairn.engine.sql.SqlScanner;
import io.cairn.engine.sql.SqlScanner.Token;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.BiFunction;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * Catalog queries answered from cairn's catalog ({@link PgCatalog}), so that psql and JDBC tools
 * can browse sources and views. There are no system tables to run SQL against: the layer
 * recognizes the exact statements psql 15 and pgjdbc 42.7 send ({@link QueryShape}s), reads their
 * filters (name patterns, relation kinds, OIDs), and answers with the columns the client expects.
 *
 * <p>Answered:
 * <ul>
 *   <li>psql: {@code \d}, {@code \dt}, {@code \dv}, {@code \dm} and their combinations, with
 *       {@code +} and name patterns (the list of relations); {@code \d NAME} and {@code \d+ NAME}
 *       (columns with their types; no indexes, policies, statistics, publications, inheritance or
 *       rules; no view definition); {@code \dn}.
 *   <li>pgjdbc {@code DatabaseMetaData}: {@code getTables}, {@code getColumns}, {@code
 *       getSchemas} (only {@code public}), {@code getCatalogs} (the session's database), and the
 *       type-name lookup of the types cairn sends.
 * </ul>
 *
 * <p>Any other statement that reads {@code pg_catalog} or {@code information_schema} (a system
 * table, {@code format_type}, {@code current_schemas}) is refused with 0A000: an unknown shape,
 * or a known shape with a filter the layer does not understand, is never answered by a guess.
 *
 * <p>Design and invariants:
 * <ul>
 *   <li>Owns only the table of known shapes ({@code ANSWERS}), filled once by the static
 *       initializers in order (the first shape that matches answers) and never changed after;
 *       everything else is per call. Stateless, so any connection thread may call {@link #answer}
 *       at once; the {@link PgCatalog} a call needs is built at most once per call, from the
 *       relations the caller supplies, and only when a shape matched.
 *   <li>Statement text is read only through the engine's tokenizer ({@link SqlScanner}): the
 *       catalog-word test looks at word and quoted-identifier tokens, {@link QueryShape} normalizes
 *       and matches shapes without a regex over the statement, and the clause regexes run over
 *       hole text whose literals and quoted identifiers are placeholders ({@link
 *       QueryShape#STRING}, {@link QueryShape#IDENTIFIER}). So time is linear in the statement,
 *       and a megabyte literal or comment needs no stack.
 *   <li>An answer is a function of the statement, the relations and the session only; a handler
 *       that meets anything it does not understand throws {@link #unsupported} (0A000) rather than
 *       answering part of the question.
 * </ul>
 */
final class CatalogQueries {
  /** In a clause: a string literal or NULL (group 1). */
  private static final String LIT = "(" + QueryShape.STRING + "|NULL)";
  /** Names that make a statement a catalog query, as a word or a quoted identifier. */
  private static final Set<String> CATALOG_NAMES = Set.of("pg_catalog", "information_schema", "pg_class", "pg_namespace",
      "pg_attribute", "pg_type", "pg_database", "pg_settings", "pg_proc", "pg_index", "pg_description", "pg_roles", "pg_tables",
      "pg_views", "pg_matviews", "current_schemas", "format_type");

  /** What a handler reads: the catalog (built on first use) and the session. */
  private record Context(Supplier<PgCatalog> catalog, Compat.Session session) {}

  private record Answer(QueryShape shape, BiFunction<Map<String, String>, Context, PgResult> handler) {}

  private static final List<Answer> ANSWERS = new ArrayList<>();

  private CatalogQueries() {}

  /**
   * The answer to a catalog query, or empty when {@code statement} reads no catalog (names no
   * catalog table or function as a word or quoted identifier; string literals and comments do not count).
   *
   * @throws SqlStates.PgError 0A000 for a catalog query the layer does not answer
   */
  static Optional<PgResult> answer(String statement, Supplier<List<CatalogRelation>> relations, Compat.Session session) {
    if (!readsCatalog(statement)) {
      return Optional.empty();
    }
    String sql = QueryShape.normalize(statement);
    PgCatalog[] built = new PgCatalog[1];
    Context ctx = new Context(() -> {
      if (built[0] == null) {
        built[0] = PgCatalog.of(relations.get());
      }
      return built[0];
    }, session);
    for (Answer a : ANSWERS) {
      Optional<Map<String, String>> holes = a.shape().match(sql);
      if (holes.isPresent()) {
        return Optional.of(a.handler().apply(holes.get(), ctx));
      }
    }
    throw unsupported("this catalog query");
  }

  /** Whether {@code sql} names a catalog table or function (ignoring case) outside string literals and comments. */
  static boolean readsCatalog(String sql) {
    for (Token t = SqlScanner.first(sql); t != null; t = t.next()) {
      if ((t.kind() == SqlScanner.Kind.WORD || t.kind() == SqlScanner.Kind.QUOTED_IDENTIFIER)
          && t.end() - t.start() <= 20 && CATALOG_NAMES.contains(t.value().toLowerCase(Locale.ROOT))) {
        return true;
      }
    }
    return false;
  }

  static SqlStates.PgError unsupported(String what) {
    return new SqlStates.PgError(SqlStates.FEATURE_NOT_SUPPORTED, "Cannot answer " + what + ": cairn's pgwire compatibility layer "
        + "answers only psql's \\d, \\dt, \\dv, \\dm, \\dn and \\d NAME and JDBC's getTables, getColumns, getSchemas and "
        + "getCatalogs (SHOW SOURCES and SHOW VIEWS list what there is)");
  }

  private static void on(String name, String template, BiFunction<Map<String, String>, Context, PgResult> handler) {
    ANSWERS.add(new Answer(QueryShape.of(name, template), handler));
  }

  // ------------------------------------------------------------------ psql 15

  /** The WHERE conditions psql puts on pg_class and pg_namespace (relkind aside). */
  private static final List<Pattern> PSQL_WHERE = List.of(
      QueryShape.clause("AND n\\.nspname (<>|=|!~|~) (" + QueryShape.STRING + ")"),
      QueryShape.clause("AND pg_catalog\\.pg_table_is_visible\\(c\\.oid\\)"),
      QueryShape.clause("AND c\\.relname OPERATOR\\(pg_catalog\\.~\\) (" + QueryShape.STRING + ") COLLATE pg_catalog\\.default"),
      QueryShape.clause("AND n\\.nspname OPERATOR\\(pg_catalog\\.~\\) (" + QueryShape.STRING + ") COLLATE pg_catalog\\.default"));

  /** Which relations pass psql's WHERE conditions ({@code where} starting with AND). */
  private static Predicate<PgCatalog.Rel> psqlWhere(String where) {
    List<QueryShape.Clause> cs = QueryShape.clauses(where, PSQL_WHERE);
    if (cs == null) {
      throw unsupported("a psql catalog query with the condition '" + where.strip() + "'");
    }
    boolean schemaOk = true;
    List<Pattern> names = new ArrayList<>();
    for (QueryShape.Clause c : cs) {
      switch (c.kind()) {
        case 0 -> schemaOk &= compare(PgCatalog.SCHEMA, c.group(1), unquote(c.group(2)));
        case 2 -> names.add(regex(unquote(c.group(1))));
        case 3 -> schemaOk &= regex(unquote(c.group(1))).matcher(PgCatalog.SCHEMA).find();
        default -> {
          // every relation is visible: all are in public, the search path
        }
      }
    }
    boolean ok = schemaOk;
    return r -> ok && names.stream().allMatch(p -> p.matcher(r.name()).find());
  }

  private static final Map<String, String> PSQL_LIST_EXTRAS = Map.of(
      "Owner", "pg_catalog.pg_get_userbyid(c.relowner)",
      "Persistence", "CASE c.relpersistence WHEN 'p' THEN 'permanent' WHEN 't' THEN 'temporary' WHEN 'u' THEN 'unlogged' END",
      "Access method", "am.amname",
      "Size", "pg_catalog.pg_size_pretty(pg_catalog.pg_table_size(c.oid))",
      "Description", "pg_catalog.obj_description(c.oid, 'pg_class')");
  private static final Pattern EXTRA = QueryShape.clause(",(.+?) as (" + QueryShape.IDENTIFIER + ")");

  static {
    // \d, \dt, \dv, \dm (and combinations, +, patterns): the list of relations
    on("psql list of relations", """
        SELECT n.nspname as "Schema", c.relname as "Name",
          CASE c.relkind {kindcase} END as "Type"{extra}
        FROM pg_catalog.pg_class c
             LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace{joins}
        WHERE c.relkind IN ({kinds}){where}
        ORDER BY 1,2""", (h, ctx) -> {
          if (!h.get("kindcase").contains("WHEN 'r' THEN 'table'") || !h.get("kindcase").contains("WHEN 'm' THEN 'materialized view'")) {
            throw unsupported("a psql list of relations with unknown kind labels");
          }
          String joins = h.get("joins").strip();
          if (!joins.isEmpty() && !joins.equalsIgnoreCase("LEFT JOIN pg_catalog.pg_am am ON am.oid = c.relam")) {
            throw unsupported("a psql list of relations joined with " + joins);
          }
          List<String> columns = new ArrayList<>(List.of("Schema", "Name", "Type"));
          List<QueryShape.Clause> extras = QueryShape.clauses(h.get("extra"), List.of(EXTRA));
          if (extras == null) {
            throw unsupported("a psql list of relations with the columns '" + h.get("extra") + "'");
          }
          for (QueryShape.Clause e : extras) {
            String label = unquote(e.group(2));
            String expected = PSQL_LIST_EXTRAS.get(label);
            if (expected == null || !QueryShape.normalize(expected).equalsIgnoreCase(e.group(1))) {
              throw unsupported("a psql list of relations with the column " + e.group(1) + " as " + e.group(2));
            }
            columns.add(label);
          }
          Set<Character> kinds = kinds(h.get("kinds"));
          Predicate<PgCatalog.Rel> where = psqlWhere(h.get("where"));
          List<List<Object>> rows = new ArrayList<>();
          for (PgCatalog.Rel r : ctx.catalog().get().relations()) {
            if (kinds.contains(r.relkind()) && where.test(r)) {
              List<Object> row = new ArrayList<>(List.of(PgCatalog.SCHEMA, r.name(), r.relkind() == 'm' ? "materialized view" : "table"));
              for (String col : columns.subList(3, columns.size())) {
                row.add(switch (col) {
                  case "Owner" -> PgCatalog.OWNER;
                  case "Persistence" -> "permanent";
                  default -> null;
                });
              }
              rows.add(row);
            }
          }
          return texts(columns, rows);
        });

    // \d NAME: which relations the pattern names
    on("psql describe: find relations", """
        SELECT c.oid, n.nspname, c.relname
        FROM pg_catalog.pg_class c
             LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        WHERE {where}
        ORDER BY 2, 3""", (h, ctx) -> {
          Predicate<PgCatalog.Rel> where = psqlWhere("AND " + h.get("where"));
          List<List<Object>> rows = new ArrayList<>();
          for (PgCatalog.Rel r : ctx.catalog().get().relations()) {
            if (where.test(r)) {
              rows.add(Arrays.asList(r.oid(), PgCatalog.SCHEMA, r.name()));
            }
          }
          return new PgResult(List.of("oid", "nspname", "relname"), List.of(PgType.INT8, PgType.TEXT, PgType.TEXT), rows, tag(rows));
        });

    // \d NAME: the relation's properties
    on("psql describe: relation", """
        SELECT c.relchecks, c.relkind, c.relhasindex, c.relhasrules, c.relhastriggers, c.relrowsecurity,
          c.relforcerowsecurity, false AS relhasoids, c.relispartition, {reloptions}, c.reltablespace,
          CASE WHEN c.reloftype = 0 THEN '' ELSE c.reloftype::pg_catalog.regtype::pg_catalog.text END,
          c.relpersistence, c.relreplident, am.amname
        FROM pg_catalog.pg_class c
         LEFT JOIN pg_catalog.pg_class tc ON (c.reltoastrelid = tc.oid)
        LEFT JOIN pg_catalog.pg_am am ON (c.relam = am.oid)
        WHERE c.oid = '{oid}'""", (h, ctx) -> {
          String opts = h.get("reloptions");
          if (!opts.equals("''") && !opts.equalsIgnoreCase(QueryShape.normalize(
              "pg_catalog.array_to_string(c.reloptions || array(select 'toast.' || x from pg_catalog.unnest(tc.reloptions) x), ', ')"))) {
            throw unsupported("a psql description with reloptions " + opts);
          }
          List<String> cols = List.of("relchecks", "relkind", "relhasindex", "relhasrules", "relhastriggers", "relrowsecurity",
              "relforcerowsecurity", "relhasoids", "relispartition", "reloptions", "reltablespace", "reloftype", "relpersistence",
              "relreplident", "amname");
          List<PgType> types = List.of(PgType.INT8, PgType.TEXT, PgType.BOOL, PgType.BOOL, PgType.BOOL, PgType.BOOL, PgType.BOOL,
              PgType.BOOL, PgType.BOOL, PgType.TEXT, PgType.INT8, PgType.TEXT, PgType.TEXT, PgType.TEXT, PgType.TEXT);
          List<List<Object>> rows = new ArrayList<>();
          ctx.catalog().get().byOid(h.get("oid")).ifPresent(r -> rows.add(Arrays.asList(0L, String.valueOf(r.relkind()), false, false,
              false, false, false, false, false, "", 0L, "", "p", "d", null)));
          return new PgResult(cols, types, rows, tag(rows));
        });

    // \d NAME, \d+ NAME: the columns
    on("psql describe: columns", """
        SELECT a.attname,
          pg_catalog.format_type(a.atttypid, a.atttypmod),
          (SELECT pg_catalog.pg_get_expr(d.adbin, d.adrelid, true)
           FROM pg_catalog.pg_attrdef d
           WHERE d.adrelid = a.attrelid AND d.adnum = a.attnum AND a.atthasdef),
          a.attnotnull,
          (SELECT c.collname FROM pg_catalog.pg_collation c, pg_catalog.pg_type t
           WHERE c.oid = a.attcollation AND t.oid = a.atttypid AND a.attcollation <> t.typcollation) AS attcollation,
          a.attidentity,
          a.attgenerated{verbose}
        FROM pg_catalog.pg_attribute a
        WHERE a.attrelid = '{oid}' AND a.attnum > 0 AND NOT a.attisdropped
        ORDER BY a.attnum""", (h, ctx) -> {
          boolean verbose = !h.get("verbose").isEmpty();
          if (verbose && !h.get("verbose").equalsIgnoreCase(QueryShape.normalize(", a.attstorage, a.attcompression AS attcompression,"
              + " CASE WHEN a.attstattarget=-1 THEN NULL ELSE a.attstattarget END AS attstattarget,"
              + " pg_catalog.col_description(a.attrelid, a.attnum)"))) {
            throw unsupported("a psql description with the columns '" + h.get("verbose") + "'");
          }
          List<String> cols = new ArrayList<>(List.of("attname", "format_type", "pg_get_expr", "attnotnull", "attcollation",
              "attidentity", "attgenerated"));
          List<PgType> types = new ArrayList<>(List.of(PgType.TEXT, PgType.TEXT, PgType.TEXT, PgType.BOOL, PgType.TEXT, PgType.TEXT,
              PgType.TEXT));
          if (verbose) {
            cols.addAll(List.of("attstorage", "attcompression", "attstattarget", "col_description"));
            types.addAll(List.of(PgType.TEXT, PgType.TEXT, PgType.INT8, PgType.TEXT));
          }
          List<List<Object>> rows = new ArrayList<>();
          ctx.catalog().get().byOid(h.get("oid")).ifPresent(r -> {
            for (PgCatalog.Attr a : r.attrs()) {
              List<Object> row = new ArrayList<>(Arrays.asList(a.name(), a.formatType(), null, false, null, "", ""));
              if (verbose) {
                row.addAll(Arrays.asList(a.type().length < 0 ? "x" : "p", "", null, null));
              }
              rows.add(row);
            }
          });
          return new PgResult(cols, types, rows, tag(rows));
        });

    // \d NAME, \d+ NAME: what cairn's relations never have (policies, statistics objects, publications,
    // inheritance, partitions, rules) and the view definition, which the layer does not know
    none("psql describe: policies", List.of("polname", "polpermissive", "array_to_string", "pg_get_expr", "pg_get_expr", "cmd"), """
        SELECT pol.polname, pol.polpermissive,
          CASE WHEN pol.polroles = '{0}' THEN NULL ELSE pg_catalog.array_to_string(array(select rolname from pg_catalog.pg_roles where oid = any (pol.polroles) order by 1),',') END,
          pg_catalog.pg_get_expr(pol.polqual, pol.polrelid),
          pg_catalog.pg_get_expr(pol.polwithcheck, pol.polrelid),
          CASE pol.polcmd
            WHEN 'r' THEN 'SELECT'
            WHEN 'a' THEN 'INSERT'
            WHEN 'w' THEN 'UPDATE'
            WHEN 'd' THEN 'DELETE'
            END AS cmd
        FROM pg_catalog.pg_policy pol
        WHERE pol.polrelid = '{oid}' ORDER BY 1""");
    none("psql describe: statistics", List.of("oid", "stxrelid", "nsp", "stxname", "columns", "ndist_enabled", "deps_enabled",
        "mcv_enabled", "stxstattarget"), """
        SELECT oid, stxrelid::pg_catalog.regclass, stxnamespace::pg_catalog.regnamespace::pg_catalog.text AS nsp, stxname,
        pg_catalog.pg_get_statisticsobjdef_columns(oid) AS columns,
          'd' = any(stxkind) AS ndist_enabled,
          'f' = any(stxkind) AS deps_enabled,
          'm' = any(stxkind) AS mcv_enabled,
        stxstattarget
        FROM pg_catalog.pg_statistic_ext
        WHERE stxrelid = '{oid}'
        ORDER BY nsp, stxname""");
    none("psql describe: publications", List.of("pubname", "?column?", "?column?"), """
        SELECT pubname
             , NULL
             , NULL
        FROM pg_catalog.pg_publication p
             JOIN pg_catalog.pg_publication_namespace pn ON p.oid = pn.pnpubid
             JOIN pg_catalog.pg_class pc ON pc.relnamespace = pn.pnnspid
        WHERE pc.oid ='{oid}' and pg_catalog.pg_relation_is_publishable('{oidtwo}')
        UNION
        SELECT pubname
             , pg_get_expr(pr.prqual, c.oid)
             , (CASE WHEN pr.prattrs IS NOT NULL THEN
                 (SELECT string_agg(attname, ', ')
                   FROM pg_catalog.generate_series(0, pg_catalog.array_upper(pr.prattrs::pg_catalog.int2[], 1)) s,
                        pg_catalog.pg_attribute
                  WHERE attrelid = pr.prrelid AND attnum = prattrs[s])
                ELSE NULL END) FROM pg_catalog.pg_publication p
             JOIN pg_catalog.pg_publication_rel pr ON p.oid = pr.prpubid
             JOIN pg_catalog.pg_class c ON c.oid = pr.prrelid
        WHERE pr.prrelid = '{oidthree}'
        UNION
        SELECT pubname
             , NULL
             , NULL
        FROM pg_catalog.pg_publication p
        WHERE p.puballtables AND pg_catalog.pg_relation_is_publishable('{oidfour}')
        ORDER BY 1""");
    none("psql describe: parents", List.of("oid"), """
        SELECT c.oid::pg_catalog.regclass
        FROM pg_catalog.pg_class c, pg_catalog.pg_inherits i
        WHERE c.oid = i.inhparent AND i.inhrelid = '{oid}'
          AND c.relkind != 'p' AND c.relkind != 'I'
        ORDER BY inhseqno""");
    none("psql describe: partitions", List.of("oid", "relkind", "inhdetachpending", "pg_get_expr"), """
        SELECT c.oid::pg_catalog.regclass, c.relkind, inhdetachpending, pg_catalog.pg_get_expr(c.relpartbound, c.oid)
        FROM pg_catalog.pg_class c, pg_catalog.pg_inherits i
        WHERE c.oid = i.inhrelid AND i.inhparent = '{oid}'
        ORDER BY pg_catalog.pg_get_expr(c.relpartbound, c.oid) = 'DEFAULT', c.oid::pg_catalog.regclass::pg_catalog.text""");
    none("psql describe: rules", List.of("rulename", "btrim"), """
        SELECT r.rulename, trim(trailing ';' from pg_catalog.pg_get_ruledef(r.oid, true))
        FROM pg_catalog.pg_rewrite r
        WHERE r.ev_class = '{oid}' AND r.rulename != '_RETURN' ORDER BY 1""");
    // psql prints no "View definition" when this has no row
    none("psql describe: view definition", List.of("pg_get_viewdef"), """
        SELECT pg_catalog.pg_get_viewdef('{oid}'::pg_catalog.oid, true)""");

    // \dn
    on("psql list of schemas", """
        SELECT n.nspname AS "Name",
          pg_catalog.pg_get_userbyid(n.nspowner) AS "Owner"
        FROM pg_catalog.pg_namespace n
        WHERE n.nspname !~ '^pg_' AND n.nspname <> 'information_schema'
        ORDER BY 1""", (h, ctx) -> texts(List.of("Name", "Owner"), List.of(List.of(PgCatalog.SCHEMA, PgCatalog.OWNER))));
  }

  // ------------------------------------------------------------------ pgjdbc 42.7 DatabaseMetaData

  private static final List<Pattern> JDBC_WHERE = List.of(
      QueryShape.clause("AND n\\.nspname LIKE " + LIT),
      QueryShape.clause("AND c\\.relname LIKE " + LIT),
      QueryShape.clause("AND \\(false (.*)\\)"),
      QueryShape.clause("AND attname LIKE " + LIT));
  /**
   * The parts of getTables' type clauses: {@code OR (c.relkind = 'r'} or {@code OR (c.relkind IN
   * ('r','p')}, then conditions on the schema, then {@code )}.
   */
  private static final List<Pattern> TYPE_PARTS = List.of(
      QueryShape.clause("OR \\(c\\.relkind = (" + QueryShape.STRING + ")"),
      QueryShape.clause("OR \\(c\\.relkind IN \\(([^)]*)\\)"),
      QueryShape.clause("AND n\\.nspname (<>|=|!~|~) (" + QueryShape.STRING + ")"),
      QueryShape.clause("AND \\(n\\.nspname = (" + QueryShape.STRING + ") OR n\\.nspname = (" + QueryShape.STRING + ")\\)"),
      QueryShape.clause("\\)"));

  /** What getTables/getColumns filter on: schema, name and column patterns, and the relkinds of the requested types. */
  private record JdbcFilter(Predicate<String> schema, Predicate<String> name, Predicate<String> column, Set<Character> kinds) {
    boolean test(PgCatalog.Rel r) {
      return schema.test(PgCatalog.SCHEMA) && name.test(r.name()) && kinds.contains(r.relkind());
    }
  }

  private static JdbcFilter jdbcWhere(String where) {
    List<QueryShape.Clause> cs = QueryShape.clauses(where, JDBC_WHERE);
    if (cs == null) {
      throw unsupported("a JDBC metadata query with the condition '" + where.strip() + "'");
    }
    Predicate<String> schema = s -> true;
    Predicate<String> name = s -> true;
    Predicate<String> column = s -> true;
    Set<Character> kinds = Set.of('r', 'm');
    for (QueryShape.Clause c : cs) {
      switch (c.kind()) {
        case 0 -> schema = schema.and(like(c.group(1)));
        case 1 -> name = name.and(like(c.group(1)));
        case 3 -> column = column.and(like(c.group(1)));
        default -> kinds = tableTypes(c.group(1));
      }
    }
    return new JdbcFilter(schema, name, column, kinds);
  }

  /** The relkinds getTables' type clauses select in schema public ("OR (c.relkind = 'r' AND n.nspname !~ '^pg_' ...)"). */
  private static Set<Character> tableTypes(String clauses) {
    List<QueryShape.Clause> cs = QueryShape.clauses(clauses, TYPE_PARTS);
    if (cs == null) {
      throw unsupported("a JDBC getTables query with the table types '" + clauses + "'");
    }
    Set<Character> kinds = new HashSet<>();
    Set<Character> open = null; // the relkinds of the clause being read, null between clauses
    boolean publicPasses = true;
    for (QueryShape.Clause c : cs) {
      switch (c.kind()) {
        case 0, 1 -> {
          if (open != null) {
            throw unsupported("a JDBC getTables query with the table types '" + clauses + "'");
          }
          open = relkinds(c.group(1), clauses);
          publicPasses = true;
        }
        case 2 -> publicPasses &= compare(PgCatalog.SCHEMA, c.group(1), unquote(c.group(2)));
        case 3 -> publicPasses &= (unquote(c.group(1)).equals(PgCatalog.SCHEMA) || unquote(c.group(2)).equals(PgCatalog.SCHEMA));
        default -> {
          if (open == null) {
            throw unsupported("a JDBC getTables query with the table types '" + clauses + "'");
          }
          if (publicPasses) {
            kinds.addAll(open);
          }
          open = null;
        }
      }
      if (open == null && c.kind() != 4) {
        throw unsupported("a JDBC getTables query with the table types '" + clauses + "'");
      }
    }
    if (open != null) {
      throw unsupported("a JDBC getTables query with the table types '" + clauses + "'");
    }
    return kinds;
  }

  /** The relkinds of {@code 'r'} or {@code 'r','p'}: single-letter literals separated by commas, else unsupported. */
  private static Set<Character> relkinds(String list, String clauses) {
    Set<Character> out = new HashSet<>();
    boolean expectLiteral = true;
    for (Token t = SqlScanner.first(list); t != null; t = t.next()) {
      if (t.kind() == SqlScanner.Kind.WHITESPACE) {
        continue;
      }
      String v = t.value();
      if (expectLiteral && t.kind() == SqlScanner.Kind.STRING && t.closed() && isRelkind(v)) {
        out.add(v.charAt(0));
        expectLiteral = false;
      } else if (!expectLiteral && t.isSymbol(',')) {
        expectLiteral = true;
      } else {
        throw unsupported("a JDBC getTables query with the table types '" + clauses + "'");
      }
    }
    if (out.isEmpty()) {
      throw unsupported("a JDBC getTables query with the table types '" + clauses + "'");
    }
    return out;
  }

  static {
    on("JDBC getTables", """
        SELECT {cat} AS "TABLE_CAT", n.nspname AS "TABLE_SCHEM", c.relname AS "TABLE_NAME",
         CASE n.nspname ~ '^pg_' OR n.nspname = 'information_schema' WHEN true THEN {typecase} AS "TABLE_TYPE",
         d.description AS "REMARKS",  '' as "TYPE_CAT", '' as "TYPE_SCHEM", '' as "TYPE_NAME",
         '' AS "SELF_REFERENCING_COL_NAME", '' AS "REF_GENERATION"
         FROM pg_catalog.pg_namespace n, pg_catalog.pg_class c
         LEFT JOIN pg_catalog.pg_description d ON (c.oid = d.objoid AND d.objsubid = 0  and d.classoid = 'pg_class'::regclass)
         WHERE c.relnamespace = n.oid{where} ORDER BY "TABLE_TYPE","TABLE_SCHEM","TABLE_NAME\"""", (h, ctx) -> {
          String cat = catalogName(h.get("cat"), ctx);
          String typecase = h.get("typecase");
          if (!typecase.contains("WHEN 'r' THEN 'TABLE'") || !typecase.contains("WHEN 'm' THEN 'MATERIALIZED VIEW'")) {
            throw unsupported("a JDBC getTables query with unknown table type names");
          }
          JdbcFilter f = jdbcWhere(h.get("where"));
          List<PgCatalog.Rel> rels = new ArrayList<>(ctx.catalog().get().relations().stream().filter(f::test).toList());
          rels.sort(Comparator.comparing((PgCatalog.Rel r) -> tableType(r)).thenComparing(PgCatalog.Rel::name));
          List<List<Object>> rows = new ArrayList<>();
          for (PgCatalog.Rel r : rels) {
            rows.add(Arrays.asList(cat, PgCatalog.SCHEMA, r.name(), tableType(r), null, "", "", "", "", ""));
          }
          return texts(List.of("TABLE_CAT", "TABLE_SCHEM", "TABLE_NAME", "TABLE_TYPE", "REMARKS", "TYPE_CAT", "TYPE_SCHEM",
              "TYPE_NAME", "SELF_REFERENCING_COL_NAME", "REF_GENERATION"), rows);
        });

    on("JDBC getColumns", """
        SELECT * FROM (SELECT {cat} AS current_database, n.nspname,c.relname,a.attname,a.atttypid,
        a.attnotnull OR (t.typtype = 'd' AND t.typnotnull) AS attnotnull,a.atttypmod,a.attlen,t.typtypmod,
        row_number() OVER (PARTITION BY a.attrelid ORDER BY a.attnum) AS attnum, nullif(a.attidentity, '') as attidentity,
        nullif(a.attgenerated, '') as attgenerated,pg_catalog.pg_get_expr(def.adbin, def.adrelid) AS adsrc,dsc.description,
        t.typbasetype,t.typtype
         FROM pg_catalog.pg_namespace n  JOIN pg_catalog.pg_class c ON (c.relnamespace = n.oid)
         JOIN pg_catalog.pg_attribute a ON (a.attrelid=c.oid)  JOIN pg_catalog.pg_type t ON (a.atttypid = t.oid)
         LEFT JOIN pg_catalog.pg_attrdef def ON (a.attrelid=def.adrelid AND a.attnum = def.adnum)
         LEFT JOIN pg_catalog.pg_description dsc ON (c.oid=dsc.objoid AND a.attnum = dsc.objsubid)
         LEFT JOIN pg_catalog.pg_class dc ON (dc.oid=dsc.classoid AND dc.relname='pg_class')
         LEFT JOIN pg_catalog.pg_namespace dn ON (dc.relnamespace=dn.oid AND dn.nspname='pg_catalog')
         WHERE c.relkind in ('r','p','v','f','m') and a.attnum > 0 AND NOT a.attisdropped{where}) c
         WHERE true{wheretwo} ORDER BY nspname,c.relname,attnum""", (h, ctx) -> {
          String cat = catalogName(h.get("cat"), ctx);
          JdbcFilter f = jdbcWhere(h.get("where") + " " + h.get("wheretwo"));
          List<List<Object>> rows = new ArrayList<>();
          for (PgCatalog.Rel r : ctx.catalog().get().relations()) {
            if (!f.test(r)) {
              continue;
            }
            for (PgCatalog.Attr a : r.attrs()) {
              if (f.column().test(a.name())) {
                rows.add(Arrays.asList(cat, PgCatalog.SCHEMA, r.name(), a.name(), (long) a.type().oid, false, (long) a.typmod(),
                    (long) a.type().length, -1L, (long) a.num(), null, null, null, null, 0L, "b"));
              }
            }
          }
          return new PgResult(List.of("current_database", "nspname", "relname", "attname", "atttypid", "attnotnull", "atttypmod",
              "attlen", "typtypmod", "attnum", "attidentity", "attgenerated", "adsrc", "description", "typbasetype", "typtype"),
              List.of(PgType.TEXT, PgType.TEXT, PgType.TEXT, PgType.TEXT, PgType.INT8, PgType.BOOL, PgType.INT8, PgType.INT8,
                  PgType.INT8, PgType.INT8, PgType.TEXT, PgType.TEXT, PgType.TEXT, PgType.TEXT, PgType.INT8, PgType.TEXT),
              rows, tag(rows));
        });

    on("JDBC getSchemas", """
        SELECT nspname AS "TABLE_SCHEM", {cat} AS "TABLE_CATALOG" FROM pg_catalog.pg_namespace
         WHERE nspname <> 'pg_toast' AND (nspname !~ '^pg_temp_'  OR nspname = (pg_catalog.current_schemas(true))[1])
         AND (nspname !~ '^pg_toast_temp_'  OR nspname = replace((pg_catalog.current_schemas(true))[1], 'pg_temp_', 'pg_toast_temp_')){where} ORDER BY "TABLE_SCHEM\"""", (h, ctx) -> {
          String cat = catalogName(h.get("cat"), ctx);
          List<QueryShape.Clause> cs = QueryShape.clauses(h.get("where"), List.of(QueryShape.clause("AND nspname LIKE " + LIT)));
          if (cs == null) {
            throw unsupported("a JDBC getSchemas query with the condition '" + h.get("where") + "'");
          }
          boolean match = cs.stream().allMatch(c -> like(c.group(1)).test(PgCatalog.SCHEMA));
          List<List<Object>> rows = new ArrayList<>();
          if (match) {
            rows.add(Arrays.asList(PgCatalog.SCHEMA, cat));
          }
          return texts(List.of("TABLE_SCHEM", "TABLE_CATALOG"), rows);
        });

    on("JDBC getCatalogs", """
        SELECT datname AS "TABLE_CAT" FROM pg_catalog.pg_database WHERE datallowconn = true ORDER BY datname""",
        (h, ctx) -> texts(List.of("TABLE_CAT"), List.of(List.of(ctx.session().database()))));

    on("JDBC type name", """
        SELECT n.nspname = ANY(current_schemas(true)), n.nspname, t.typname FROM pg_catalog.pg_type t
        JOIN pg_catalog.pg_namespace n ON t.typnamespace = n.oid WHERE t.oid = {oid}""", (h, ctx) -> {
          for (PgType t : PgType.values()) {
            if (Integer.toString(t.oid).equals(h.get("oid").strip())) {
              return new PgResult(List.of("?column?", "nspname", "typname"), List.of(PgType.BOOL, PgType.TEXT, PgType.TEXT),
                  List.of(Arrays.asList(true, "pg_catalog", t.typname)), "SELECT 1");
            }
          }
          throw unsupported("the type with oid " + h.get("oid"));
        });

    // pgjdbc's TypeInfoCache for a type outside its built-in table (interval): what getObject returns
    on("JDBC type kind", """
        SELECT typinput='pg_catalog.array_in'::regproc as is_array, typtype, typname, pg_type.oid
          FROM pg_catalog.pg_type
          LEFT JOIN (select ns.oid as nspoid, ns.nspname, r.r
                  from pg_namespace as ns
                  join ( select s.r, (current_schemas(false))[s.r] as nspname
                           from generate_series(1, array_upper(current_schemas(false), 1)) as s(r) ) as r
                 using ( nspname )
               ) as sp
            ON sp.nspoid = typnamespace
         WHERE pg_type.oid = {oid}
         ORDER BY sp.r, pg_type.oid DESC;""", (h, ctx) -> {
          for (PgType t : PgType.values()) {
            if (Integer.toString(t.oid).equals(h.get("oid").strip())) {
              return new PgResult(List.of("is_array", "typtype", "typname", "oid"), List.of(PgType.BOOL, PgType.TEXT, PgType.TEXT, PgType.INT8),
                  List.of(Arrays.asList(false, "b", t.typname, (long) t.oid)), "SELECT 1");
            }
          }
          throw unsupported("the type with oid " + h.get("oid"));
        });
  }

  // ------------------------------------------------------------------ helpers

  private static void none(String name, List<String> columns, String template) {
    on(name, template, (h, ctx) -> {
      List<PgType> types = columns.stream().map(c -> PgType.TEXT).toList();
      return new PgResult(columns, types, List.of(), "SELECT 0");
    });
  }

  private static String tableType(PgCatalog.Rel r) {
    return r.relkind() == 'm' ? "MATERIALIZED VIEW" : "TABLE";
  }

  private static String catalogName(String expr, Context ctx) {
    if (expr.equalsIgnoreCase("current_database()")) {
      return ctx.session().database();
    }
    if (expr.equalsIgnoreCase("NULL")) {
      return null;
    }
    throw unsupported("a JDBC metadata query with the catalog " + expr);
  }

  private static PgResult texts(List<String> columns, List<List<Object>> rows) {
    return new PgResult(columns, columns.stream().map(c -> PgType.TEXT).toList(), rows, tag(rows));
  }

  private static String tag(List<?> rows) {
    return "SELECT " + rows.size();
  }

  /** The relkinds of "'r','p','v'": the single-character string literals of the list (others, such as '', are skipped). */
  private static Set<Character> kinds(String list) {
    Set<Character> out = new HashSet<>();
    for (Token t = SqlScanner.first(list); t != null; t = t.next()) {
      if (t.kind() == SqlScanner.Kind.STRING && t.closed()) {
        String v = t.value();
        if (isRelkind(v)) {
          out.add(v.charAt(0));
        }
      }
    }
    return out;
  }

  /** Whether {@code v} is one ASCII letter, digit or underscore (a regex {@code \\w}). */
  private static boolean isRelkind(String v) {
    if (v.length() != 1) {
      return false;
    }
    char c = v.charAt(0);
    return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_';
  }

  /** {@code value <op> literal} for the operators psql and pgjdbc put on nspname. */
  private static boolean compare(String value, String op, String literal) {
    return switch (op) {
      case "=" -> value.equals(literal);
      case "<>" -> !value.equals(literal);
      case "~" -> regex(literal).matcher(value).find();
      default -> !regex(literal).matcher(value).find();
    };
  }

  private static Pattern regex(String re) {
    try {
      return Pattern.compile(re);
    } catch (PatternSyntaxException | StackOverflowError e) {
      throw unsupported("the regular expression '" + (re.length() <= 100 ? re : re.substring(0, 100) + "...") + "'");
    }
  }

  private static final int ANY_ONE = -1;
  private static final int ANY_SEQUENCE = -2;

  /**
   * The predicate of {@code LIKE literal} (backslash escapes; NULL matches nothing). Matched
   * without a regular expression, code point by code point, so a long pattern needs no stack.
   */
  private static Predicate<String> like(String literal) {
    if (literal.equalsIgnoreCase("NULL")) {
      return s -> false;
    }
    int[] p = unquote(literal).codePoints().toArray();
    int[] pattern = new int[p.length];
    int len = 0;
    for (int i = 0; i < p.length; i++) {
      if (p[i] == '\\' && i + 1 < p.length) {
        pattern[len++] = p[++i];
      } else {
        pattern[len++] = p[i] == '%' ? ANY_SEQUENCE : p[i] == '_' ? ANY_ONE : p[i];
      }
    }
    int[] compiled = Arrays.copyOf(pattern, len);
    return s -> likeMatches(compiled, s.codePoints().toArray());
  }

  /** Whether {@code s} matches {@code pattern}: backtracking only to the last {@code %}, so time is at most their product. */
  private static boolean likeMatches(int[] pattern, int[] s) {
    int p = 0;
    int i = 0;
    int star = -1;
    int starAt = 0;
    while (i < s.length) {
      if (p < pattern.length && pattern[p] == ANY_SEQUENCE) {
        star = p++;
        starAt = i;
      } else if (p < pattern.length && (pattern[p] == ANY_ONE || pattern[p] == s[i])) {
        p++;
        i++;
      } else if (star >= 0) {
        p = star + 1;
        i = ++starAt;
      } else {
        return false;
      }
    }
    while (p < pattern.length && pattern[p] == ANY_SEQUENCE) {
      p++;
    }
    return p == pattern.length;
  }

  /**
   * The text of a quoted SQL literal or identifier ('it''s' → it's, "Name" → Name); text that is
   * not quoted is returned as it is.
   */
  private static String unquote(String literal) {
    String s = literal.strip();
    Token t = SqlScanner.first(s);
    if (t != null && (t.kind() == SqlScanner.Kind.STRING || t.kind() == SqlScanner.Kind.QUOTED_IDENTIFIER) && t.closed()
        && t.end() == s.length()) {
      return t.value();
    }
    if (!s.isEmpty() && !s.startsWith("'") && !s.startsWith("\"")) {
      return s;
    }
    throw unsupported("the literal " + literal.toLowerCase(Locale.ROOT));
  }
}
