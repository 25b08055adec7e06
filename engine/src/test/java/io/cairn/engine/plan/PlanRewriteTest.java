package io.cairn.engine.plan;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.expr.Expr;
import io.cairn.engine.row.Column;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The two rewrites every view's plan goes through, on their shape (the SQL tests check that views
 * still equal their oracles): a WHERE over a join filters the side it reads, and a join's sides
 * carry only the columns read above, unless a side shares its source's arrangement.
 */
class PlanRewriteTest {
  static final Schema A = Schema.of(Column.of("id", Type.BIGINT), Column.of("name", Type.TEXT), Column.of("note", Type.TEXT));
  static final Schema B = Schema.of(Column.of("a_id", Type.BIGINT), Column.of("n", Type.BIGINT), Column.of("comment", Type.TEXT));

  @Test
  void aConditionOnOneSideFiltersThatSideAndOnlyReadColumnsCrossTheJoin() {
    Plan join = Plan.Join.of(new Plan.Get("a", A), new Plan.Get("b", B), new int[] {0}, new int[] {0});
    // SELECT a.name, b.n FROM a JOIN b ON a.id = b.a_id WHERE b.n > 5 AND a.name <> b.comment
    Expr onB = new Expr.Cmp(Expr.CmpOp.GT, Expr.col(4, Type.BIGINT), Expr.lit(5L));
    Expr both = new Expr.Cmp(Expr.CmpOp.NE, Expr.col(1, Type.TEXT), Expr.col(5, Type.TEXT));
    Plan plan = new Plan.Map(new Plan.Filter(join, new Expr.And(onB, both)), List.of(Expr.col(1, Type.TEXT), Expr.col(4, Type.BIGINT)),
        Schema.of(Column.of("name", Type.TEXT), Column.of("n", Type.BIGINT)));

    Plan pushed = FilterPushdown.push(plan);
    Plan.Filter above = (Plan.Filter) ((Plan.Map) pushed).input();
    assertThat(above.predicate()).as("the condition over both sides stays above the join").isEqualTo(both);
    Plan.Join j = (Plan.Join) above.input();
    assertThat(j.left()).isEqualTo(new Plan.Get("a", A));
    assertThat(j.right()).as("b.n > 5 filters b, its column moved").isEqualTo(
        new Plan.Filter(new Plan.Get("b", B), new Expr.Cmp(Expr.CmpOp.GT, Expr.col(1, Type.BIGINT), Expr.lit(5L))));

    // a is arranged by id (the join key): it stays whole (the join shares it) though its note is never read;
    // b is arranged by something else, but every column of it is read (a_id, n, comment): no Map is added
    Plan pruned = ColumnPruning.prune(pushed, name -> name.equals("a") ? new int[] {0} : new int[] {2});
    assertThat(pruned.schema()).isEqualTo(plan.schema());
    Plan.Join pj = (Plan.Join) ((Plan.Filter) ((Plan.Map) pruned).input()).input();
    assertThat(pj.left()).isEqualTo(new Plan.Get("a", A));
    assertThat(pj.right()).isEqualTo(j.right());
    // when a is not arranged by the join key, it is cut to what is read: id (the key) and name
    Plan.Join cutA = (Plan.Join) ((Plan.Filter) ((Plan.Map) ColumnPruning.prune(pushed, name -> new int[] {2})).input()).input();
    assertThat(cutA.left().schema().columns()).extracting(Column::name).containsExactly("id", "name");
    Plan pruned2 = ColumnPruning.prune(FilterPushdown.push(new Plan.Map(join, List.of(Expr.col(4, Type.BIGINT)),
        Schema.of(Column.of("n", Type.BIGINT)))), name -> new int[] {1});
    Plan.Join pj2 = (Plan.Join) ((Plan.Map) pruned2).input();
    assertThat(pj2.left().schema().columns()).as("a cut to its key").extracting(Column::name).containsExactly("id");
    assertThat(pj2.right().schema().columns()).as("b cut to its key and n").extracting(Column::name).containsExactly("a_id", "n");
  }
}
