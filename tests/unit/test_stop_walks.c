/* test_stop_walks.c - the parser's depth walk stops on Ctrl-C and .timeout
 * (issue 27, "stoppable everywhere").
 *
 * sl_stmt_depth walks every node of a statement once, as the last step of
 * parsing it: for a 1,000,000-literal IN list that is 0.2-0.4 s on a
 * loaded 2-core host, longer than the 200 ms a stop may take.  So it polls
 * the interrupt flag.  The statement here puts a deep `+` chain behind a
 * 200,000-literal IN list in the walk's order (the IN list is popped
 * first): a walk that polls stops among the literals and never reaches the
 * chain, so it measures less than the chain's depth; a walk that does not
 * poll measures the whole chain.  Before the fix the depth measured was
 * the chain's, whatever the flag said. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "sluice/common/arena.h"
#include "sluice/common/cancel.h"
#include "sluice/common/strbuf.h"
#include "sluice/parser/ast.h"
#include "sluice/parser/parser.h"

#define LITERALS 200000
#define CHAIN 500 /* under SL_MAX_EXPR_DEPTH: the statement parses */

/* SELECT 1 FROM t WHERE (1 + 1 + ... > 0) AND n IN (0, 1, ...) */
static char *statement(void) {
  sl_strbuf b = SL_STRBUF_INIT;
  sl_strbuf_append(&b, "SELECT 1 FROM t WHERE (1");
  for (int i = 0; i < CHAIN; i++)
    sl_strbuf_append(&b, " + 1");
  sl_strbuf_append(&b, " > 0) AND n IN (0");
  for (int i = 1; i < LITERALS; i++)
    sl_strbuf_printf(&b, ", %d", i);
  sl_strbuf_append(&b, ")");
  return sl_strbuf_detach(&b);
}

static void test_depth_walk_stops_when_interrupted(void **state) {
  (void)state;
  char *sql = statement();
  sl_arena a;
  sl_arena_init(&a, 0);
  sl_stmt *stmt = NULL;
  sl_error err = {0};
  assert_int_equal(sl_parse_one(&a, sql, strlen(sql), 1, &stmt, &err), SL_OK);
  sl_span at = stmt->span;
  /* not stopped: the whole walk, the chain's depth */
  int full = sl_stmt_depth(stmt, SL_MAX_EXPR_DEPTH, &at);
  assert_true(full >= CHAIN);

  sl_cancel stop; /* as a coordinator's CANCEL requests it */
  sl_cancel_init(&stop, NULL);
  sl_cancel_request(&stop);
  const sl_cancel *outer = sl_cancel_scope_enter(&stop);
  int stopped = sl_stmt_depth(stmt, SL_MAX_EXPR_DEPTH, &at);
  /* and parsing a statement while stopped fails as cancelled */
  sl_stmt *again = NULL;
  sl_error err2 = {0};
  int rc = sl_parse_one(&a, sql, strlen(sql), 1, &again, &err2);
  sl_cancel_scope_leave(outer);
  assert_true(stopped < CHAIN);
  assert_int_equal(rc, SL_ECANCELLED);

  sl_error_clear(&err);
  sl_error_clear(&err2);
  sl_arena_free(&a);
  free(sql);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_depth_walk_stops_when_interrupted),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
