/* grammar.y - the lemon grammar of Sluice's SQL dialect (Flink SQL).
 *
 * lemon generates build/parser/generated/grammar.c and grammar.h from this
 * file; the token codes (TK_*) in grammar.h are what the tokenizer returns.
 * Actions build the AST (sluice/parser/ast.h) in the arena of the parse context
 * through the p_* helpers of parse_build.c.  Every node's span runs from its
 * first token to ctx->last_end, the end of the last token shifted before
 * the rule was reduced.
 *
 * Keywords: only words that would make the grammar ambiguous or that SQL
 * reserves are reserved; the others are listed in %fallback below, so lemon
 * treats them as identifiers wherever the keyword itself does not fit
 * (`SELECT key, hour FROM t` works).  Words that start an expression (DATE,
 * CAST, ...) keep their keyword meaning there.
 */

%name sl_lemon_parse
%token_prefix TK_
%token_type {sl_token}
%default_type {void *}
%extra_argument {sl_parse_ctx *ctx}
%stack_size 1000
%start_symbol input

%include {
/* Generated from parser/grammar.y by lemon: do not edit. */
#include <stdlib.h>
#include <string.h>

#include "parse_int.h"

/* lempar.c leaves some parameters and locals unused. */
#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wunused-variable"
#endif

#define TSPAN(X) p_tok_span(&(X))
#define FROMSPAN(S) p_span_from(ctx, (S))
}

%code {
/* The parser lives in the caller's arena (no malloc); lemon's Init sets it
 * up and Finalize has nothing to release since no symbol has a
 * destructor. */
void *sl_lemon_parse_new(sl_arena *a) {
  yyParser *p = sl_arena_alloc(a, sizeof(yyParser));
  sl_lemon_parseInit(p);
  return p;
}
}

%syntax_error { p_syntax_error(ctx, yymajor, &TOKEN); }
%stack_overflow { p_stack_overflow(ctx); }

/* Tokens the tokenizer returns that no rule uses; declared so that they get
 * codes and are reported as syntax errors where they appear. */
%token LBRACKET RBRACKET.

/* Non-reserved keywords. */
%fallback ID
  ANALYZE ARRAY ASC ASYMMETRIC BIGINT BINARY BOOLEAN BOTH BYTES CHAR
  COMMENT CONSTRAINT CURRENT_DATE CURRENT_TIME CURRENT_TIMESTAMP DATE DAY
  DAYS DEC DECIMAL DESC DESCRIBE DESCRIPTOR DOUBLE ENFORCED ESCAPE EXPLAIN
  EXTRACT FILTER FIRST FLOAT FORMAT FUNCTION FUNCTIONS HOUR HOURS IF INT
  INTEGER KEY LANGUAGE LAST LEADING LOCAL LOCALTIME LOCALTIMESTAMP MAP
  MILLISECOND MINUTE MINUTES MONTH MONTHS MULTISET NEXT NULLS NUMERIC OF
  ONLY OVER OVERWRITE PARTITION PARTITIONED PLAN POSITION PRECISION PRIMARY
  RAW REAL RESET ROWS SECOND SECONDS SET SHOW SIMILAR SMALLINT STRING
  SUBSTRING SYMMETRIC SYSTEM SYSTEM_TIME TABLES TEMPORARY TIME TIMESTAMP
  TIMESTAMP_LTZ TINYINT TO TRAILING TRIM TRY_CAST UNKNOWN VARBINARY VARCHAR
  VIEW VIEWS WATERMARK WITHOUT YEAR YEARS ZONE.

%left UNION EXCEPT.
%left INTERSECT.
%left OR.
%left AND.
%right NOT.
%left IS LIKE SIMILAR BETWEEN IN EQ NE LT LE GT GE.
%right ESCAPE.
%left PLUS MINUS CONCAT.
%left STAR SLASH PERCENT.
%right UMINUS.

/* ---- statements ---------------------------------------------------------- */

input ::= cmdlist.
cmdlist ::= cmdlist ecmd.
cmdlist ::= ecmd.
ecmd ::= SEMI.
ecmd ::= cmd(S) SEMI. { p_add_stmt(ctx, S); }

%type cmd {sl_stmt *}
%type explainable {sl_stmt *}

cmd(A) ::= query(Q). {
  A = p_stmt(ctx, SL_STMT_QUERY, NULL);
  A->u.query = Q;
  A->span = Q->span;
}
cmd(A) ::= insert(X). { A = X; }

%type insert {sl_stmt *}
insert(A) ::= INSERT(K) into_over(O) qname(T) query(Q). {
  A = p_stmt(ctx, SL_STMT_INSERT, &K);
  A->u.insert.table = *T;
  A->u.insert.overwrite = O;
  A->u.insert.query = Q;
}
insert(A) ::= INSERT(K) into_over(O) qname(T) LP namelist(C) RP query(Q). {
  A = p_stmt(ctx, SL_STMT_INSERT, &K);
  A->u.insert.table = *T;
  A->u.insert.overwrite = O;
  A->u.insert.columns = C;
  A->u.insert.query = Q;
}
%type into_over {bool}
into_over(A) ::= INTO. { A = false; }
into_over(A) ::= OVERWRITE. { A = true; }
into_over(A) ::= OVERWRITE TABLE. { A = true; }

/* EXPLAIN [ANALYZE] [(FORMAT TEXT|JSON)] stmt, and Flink's EXPLAIN PLAN FOR. */
cmd(A) ::= EXPLAIN(K) explainable(S). {
  A = p_stmt(ctx, SL_STMT_EXPLAIN, &K);
  A->u.explain.stmt = S;
}
cmd(A) ::= EXPLAIN(K) ANALYZE explainable(S). {
  A = p_stmt(ctx, SL_STMT_EXPLAIN, &K);
  A->u.explain.analyze = true;
  A->u.explain.stmt = S;
}
cmd(A) ::= EXPLAIN(K) LP FORMAT nm(F) RP explainable(S). {
  A = p_stmt(ctx, SL_STMT_EXPLAIN, &K);
  A->u.explain.format = p_explain_format(ctx, &F);
  A->u.explain.stmt = S;
}
cmd(A) ::= EXPLAIN(K) ANALYZE LP FORMAT nm(F) RP explainable(S). {
  A = p_stmt(ctx, SL_STMT_EXPLAIN, &K);
  A->u.explain.analyze = true;
  A->u.explain.format = p_explain_format(ctx, &F);
  A->u.explain.stmt = S;
}
cmd(A) ::= EXPLAIN(K) PLAN FOR explainable(S). {
  A = p_stmt(ctx, SL_STMT_EXPLAIN, &K);
  A->u.explain.stmt = S;
}
explainable(A) ::= query(Q). {
  A = p_stmt(ctx, SL_STMT_QUERY, NULL);
  A->u.query = Q;
  A->span = Q->span;
}
explainable(A) ::= insert(X). { A = X; }

/* CREATE TABLE */
cmd(A) ::= CREATE(K) temp_opt(T) TABLE ifnotexists(I) qname(N)
           LP table_elems(E) RP table_comment(C) partitioned(P) with_opts(W). {
  A = p_stmt(ctx, SL_STMT_CREATE_TABLE, &K);
  A->u.create_table.name = *N;
  A->u.create_table.temporary = T;
  A->u.create_table.if_not_exists = I;
  p_table_elements(ctx, A, E);
  A->u.create_table.comment = C;
  A->u.create_table.partitioned_by = P;
  A->u.create_table.options = W;
}
%type temp_opt {bool}
temp_opt(A) ::= . { A = false; }
temp_opt(A) ::= TEMPORARY. { A = true; }
%type ifnotexists {bool}
ifnotexists(A) ::= . { A = false; }
ifnotexists(A) ::= IF NOT EXISTS. { A = true; }
%type ifexists {bool}
ifexists(A) ::= . { A = false; }
ifexists(A) ::= IF EXISTS. { A = true; }

%type table_elems {sl_list *}
%type table_elem {p_table_elem *}
table_elems(A) ::= table_elem(E). { A = p_list1(ctx, E); }
table_elems(A) ::= table_elems(L) COMMA table_elem(E). { A = p_push(ctx, L, E); }

table_elem(A) ::= nm(N) type(T) col_attrs(X). {
  A = SL_ANEW(ctx->arena, p_table_elem);
  A->column = X;
  A->column->name = p_ident(ctx, &N);
  A->column->type = T;
  A->column->span = FROMSPAN(TSPAN(N));
  A->span = A->column->span;
}
table_elem(A) ::= nm(N) AS expr(E) col_comment(C). {
  A = SL_ANEW(ctx->arena, p_table_elem);
  A->column = SL_ANEW(ctx->arena, sl_column_def);
  A->column->name = p_ident(ctx, &N);
  A->column->computed = E;
  A->column->comment = C;
  A->column->span = FROMSPAN(TSPAN(N));
  A->span = A->column->span;
}
table_elem(A) ::= WATERMARK(K) FOR qname(C) AS expr(E). {
  A = SL_ANEW(ctx->arena, p_table_elem);
  A->watermark = SL_ANEW(ctx->arena, sl_watermark_def);
  A->watermark->column = *C;
  A->watermark->expr = E;
  A->watermark->span = FROMSPAN(TSPAN(K));
  A->span = A->watermark->span;
}
table_elem(A) ::= PRIMARY(K) KEY LP namelist(L) RP NOT ENFORCED. {
  A = SL_ANEW(ctx->arena, p_table_elem);
  A->primary_key = L;
  A->span = FROMSPAN(TSPAN(K));
}
table_elem(A) ::= CONSTRAINT(K) nm PRIMARY KEY LP namelist(L) RP NOT ENFORCED. {
  A = SL_ANEW(ctx->arena, p_table_elem);
  A->primary_key = L;
  A->span = FROMSPAN(TSPAN(K));
}

%type col_attrs {sl_column_def *}
col_attrs(A) ::= . { A = SL_ANEW(ctx->arena, sl_column_def); }
col_attrs(A) ::= col_attrs(A) PRIMARY KEY NOT ENFORCED. { A->primary_key = true; }
col_attrs(A) ::= col_attrs(A) COMMENT STRLIT(S). { A->comment = p_string(ctx, &S); }
%type col_comment {const char *}
col_comment(A) ::= . { A = NULL; }
col_comment(A) ::= COMMENT STRLIT(S). { A = p_string(ctx, &S); }
%type table_comment {const char *}
table_comment(A) ::= . { A = NULL; }
table_comment(A) ::= COMMENT STRLIT(S). { A = p_string(ctx, &S); }
%type partitioned {sl_list *}
partitioned(A) ::= . { A = NULL; }
partitioned(A) ::= PARTITIONED BY LP namelist(L) RP. { A = L; }

%type with_opts {sl_list *}
%type optlist {sl_list *}
%type option {sl_option *}
with_opts(A) ::= . { A = NULL; }
with_opts(A) ::= WITH LP optlist(L) RP. { A = L; }
optlist(A) ::= option(O). { A = p_list1(ctx, O); }
optlist(A) ::= optlist(L) COMMA option(O). { A = p_push(ctx, L, O); }
option(A) ::= STRLIT(K) EQ STRLIT(V). {
  A = SL_ANEW(ctx->arena, sl_option);
  A->key = p_string(ctx, &K);
  A->value = p_string(ctx, &V);
  A->span = FROMSPAN(TSPAN(K));
}

/* CREATE VIEW */
cmd(A) ::= CREATE(K) temp_opt(T) VIEW ifnotexists(I) qname(N) AS query(Q). {
  A = p_stmt(ctx, SL_STMT_CREATE_VIEW, &K);
  A->u.create_view.name = *N;
  A->u.create_view.temporary = T;
  A->u.create_view.if_not_exists = I;
  A->u.create_view.query = Q;
  A->u.create_view.query_span = Q->span;
}
cmd(A) ::= CREATE(K) temp_opt(T) VIEW ifnotexists(I) qname(N)
           LP namelist(C) RP AS query(Q). {
  A = p_stmt(ctx, SL_STMT_CREATE_VIEW, &K);
  A->u.create_view.name = *N;
  A->u.create_view.temporary = T;
  A->u.create_view.if_not_exists = I;
  A->u.create_view.columns = C;
  A->u.create_view.query = Q;
  A->u.create_view.query_span = Q->span;
}

/* CREATE FUNCTION */
cmd(A) ::= CREATE(K) temp_opt(T) FUNCTION ifnotexists(I) qname(N)
           AS STRLIT(C) language(L). {
  A = p_stmt(ctx, SL_STMT_CREATE_FUNCTION, &K);
  A->u.create_function.name = *N;
  A->u.create_function.temporary = T;
  A->u.create_function.if_not_exists = I;
  A->u.create_function.class_name = p_string(ctx, &C);
  A->u.create_function.language = L;
}
cmd(A) ::= CREATE(K) TEMPORARY SYSTEM FUNCTION ifnotexists(I) qname(N)
           AS STRLIT(C) language(L). {
  A = p_stmt(ctx, SL_STMT_CREATE_FUNCTION, &K);
  A->u.create_function.name = *N;
  A->u.create_function.temporary = true;
  A->u.create_function.if_not_exists = I;
  A->u.create_function.class_name = p_string(ctx, &C);
  A->u.create_function.language = L;
}
%type language {const char *}
language(A) ::= . { A = NULL; }
language(A) ::= LANGUAGE nm(L). { A = p_language(ctx, &L); }

/* DROP */
cmd(A) ::= DROP(K) temp_opt(T) object_kind(W) ifexists(I) qname(N). {
  A = p_stmt(ctx, SL_STMT_DROP, &K);
  A->u.drop.what = W;
  A->u.drop.temporary = T;
  A->u.drop.if_exists = I;
  A->u.drop.name = *N;
}
cmd(A) ::= DROP(K) TEMPORARY SYSTEM FUNCTION ifexists(I) qname(N). {
  A = p_stmt(ctx, SL_STMT_DROP, &K);
  A->u.drop.what = SL_OBJ_FUNCTION;
  A->u.drop.temporary = true;
  A->u.drop.if_exists = I;
  A->u.drop.name = *N;
}
%type object_kind {sl_object_kind}
object_kind(A) ::= TABLE. { A = SL_OBJ_TABLE; }
object_kind(A) ::= VIEW. { A = SL_OBJ_VIEW; }
object_kind(A) ::= FUNCTION. { A = SL_OBJ_FUNCTION; }

/* SHOW, DESCRIBE */
cmd(A) ::= SHOW(K) show_what(W). {
  A = p_stmt(ctx, SL_STMT_SHOW, &K);
  A->u.show.what = W;
}
%type show_what {sl_show_kind}
show_what(A) ::= TABLES. { A = SL_SHOW_TABLES; }
show_what(A) ::= VIEWS. { A = SL_SHOW_VIEWS; }
show_what(A) ::= FUNCTIONS. { A = SL_SHOW_FUNCTIONS; }
cmd(A) ::= SHOW(K) CREATE TABLE qname(N). {
  A = p_stmt(ctx, SL_STMT_SHOW, &K);
  A->u.show.what = SL_SHOW_CREATE_TABLE;
  A->u.show.name = *N;
}
cmd(A) ::= SHOW(K) CREATE VIEW qname(N). {
  A = p_stmt(ctx, SL_STMT_SHOW, &K);
  A->u.show.what = SL_SHOW_CREATE_VIEW;
  A->u.show.name = *N;
}
cmd(A) ::= DESCRIBE(K) qname(N). {
  A = p_stmt(ctx, SL_STMT_DESCRIBE, &K);
  A->u.describe.name = *N;
}
cmd(A) ::= DESC(K) qname(N). {
  A = p_stmt(ctx, SL_STMT_DESCRIBE, &K);
  A->u.describe.name = *N;
}

/* SET / RESET.  Unquoted keys and values (parallelism.default,
 * sluice.late-records) arrive as one RAWWORD token: parse.c switches the
 * tokenizer to raw words right after a statement-initial SET or RESET. */
cmd(A) ::= SET(K). { A = p_stmt(ctx, SL_STMT_SET, &K); }
cmd(A) ::= SET(K) setword(N) EQ setword(V). {
  A = p_stmt(ctx, SL_STMT_SET, &K);
  A->u.set.key = N;
  A->u.set.value = V;
}
cmd(A) ::= RESET(K). { A = p_stmt(ctx, SL_STMT_RESET, &K); }
cmd(A) ::= RESET(K) setword(N). {
  A = p_stmt(ctx, SL_STMT_RESET, &K);
  A->u.reset.key = N;
}
%type setword {const char *}
setword(A) ::= STRLIT(S). { A = p_string(ctx, &S); }
setword(A) ::= RAWWORD(W). { A = p_text(ctx, &W); }
setword(A) ::= ID(W). { A = p_ident(ctx, &W); }

/* ---- names --------------------------------------------------------------- */

/* An identifier: a plain or quoted ID, or a non-reserved keyword through
 * %fallback.  The token is kept so the caller has its text and position. */
%type nm {sl_token}
nm(A) ::= ID(X). { A = X; }

%type qname {sl_qname *}
qname(A) ::= nm(X). { A = p_qname(ctx, &X); }
qname(A) ::= qname(Q) DOT nm(X). { A = p_qname_push(ctx, Q, &X); }

%type namelist {sl_list *}
namelist(A) ::= nm(X). { A = p_names1(ctx, &X); }
namelist(A) ::= namelist(L) COMMA nm(X). { A = p_names_push(ctx, L, &X); }

/* ---- types --------------------------------------------------------------- */

%type type {sl_type *}
%type basetype {sl_type *}
type(A) ::= basetype(A).
type(A) ::= basetype(A) NOT NULL. { A->not_null = true; }
type(A) ::= basetype(A) NULL.

basetype(A) ::= BOOLEAN. { A = p_type(ctx, SL_TYPE_BOOLEAN); }
basetype(A) ::= TINYINT. { A = p_type(ctx, SL_TYPE_TINYINT); }
basetype(A) ::= SMALLINT. { A = p_type(ctx, SL_TYPE_SMALLINT); }
basetype(A) ::= INT. { A = p_type(ctx, SL_TYPE_INT); }
basetype(A) ::= INTEGER. { A = p_type(ctx, SL_TYPE_INT); }
basetype(A) ::= BIGINT. { A = p_type(ctx, SL_TYPE_BIGINT); }
basetype(A) ::= FLOAT. { A = p_type(ctx, SL_TYPE_FLOAT); }
basetype(A) ::= REAL. { A = p_type(ctx, SL_TYPE_FLOAT); }
basetype(A) ::= DOUBLE. { A = p_type(ctx, SL_TYPE_DOUBLE); }
basetype(A) ::= DOUBLE PRECISION. { A = p_type(ctx, SL_TYPE_DOUBLE); }
basetype(A) ::= decimal_kw. { A = sl_type_decimal(ctx->arena, 10, 0); }
basetype(A) ::= decimal_kw LP INTLIT(P) RP. {
  A = sl_type_decimal(ctx->arena, p_int(ctx, &P), 0);
}
basetype(A) ::= decimal_kw LP INTLIT(P) COMMA INTLIT(S) RP. {
  A = sl_type_decimal(ctx->arena, p_int(ctx, &P), p_int(ctx, &S));
}
decimal_kw ::= DECIMAL.
decimal_kw ::= DEC.
decimal_kw ::= NUMERIC.
basetype(A) ::= CHAR. { A = p_type(ctx, SL_TYPE_CHAR); A->precision = 1; }
basetype(A) ::= CHAR LP INTLIT(N) RP. {
  A = p_type(ctx, SL_TYPE_CHAR);
  A->precision = p_int(ctx, &N);
}
basetype(A) ::= VARCHAR. { A = sl_type_varchar(ctx->arena, -1); }
basetype(A) ::= VARCHAR LP INTLIT(N) RP. {
  A = sl_type_varchar(ctx->arena, p_int(ctx, &N));
}
basetype(A) ::= STRING. { A = sl_type_varchar(ctx->arena, -1); }
basetype(A) ::= DATE. { A = p_type(ctx, SL_TYPE_DATE); }
basetype(A) ::= TIME prec_opt(P) without_tz. {
  A = p_type(ctx, SL_TYPE_TIME);
  if (P >= 0) A->precision = P;
}
basetype(A) ::= TIMESTAMP prec_opt(P) without_tz. {
  A = p_type(ctx, SL_TYPE_TIMESTAMP);
  if (P >= 0) A->precision = P;
}
basetype(A) ::= TIMESTAMP prec_opt(P) WITH LOCAL TIME ZONE. {
  A = p_type(ctx, SL_TYPE_TIMESTAMP_LTZ);
  if (P >= 0) A->precision = P;
}
basetype(A) ::= TIMESTAMP_LTZ prec_opt(P). {
  A = p_type(ctx, SL_TYPE_TIMESTAMP_LTZ);
  if (P >= 0) A->precision = P;
}
basetype(A) ::= INTERVAL interval_qualifier(Q). {
  bool ym = Q.unit == SL_UNIT_YEAR || Q.unit == SL_UNIT_MONTH;
  A = p_type(ctx, ym ? SL_TYPE_INTERVAL_YEAR_MONTH : SL_TYPE_INTERVAL_DAY_TIME);
}
basetype(A) ::= ROW LT fieldlist(F) GT. { A = p_row_type(ctx, F); }
basetype(A) ::= ROW LP fieldlist(F) RP. { A = p_row_type(ctx, F); }
basetype(A) ::= unsupported_type(X). {
  p_error_at(ctx, TSPAN(X), "type %s is not supported", p_upper(ctx, &X));
  A = p_type(ctx, SL_TYPE_INT);
}
%type unsupported_type {sl_token}
unsupported_type(A) ::= ARRAY(X). { A = X; }
unsupported_type(A) ::= MAP(X). { A = X; }
unsupported_type(A) ::= MULTISET(X). { A = X; }
unsupported_type(A) ::= BYTES(X). { A = X; }
unsupported_type(A) ::= BINARY(X). { A = X; }
unsupported_type(A) ::= VARBINARY(X). { A = X; }
unsupported_type(A) ::= RAW(X). { A = X; }

%type prec_opt {int}
prec_opt(A) ::= . { A = -1; }
prec_opt(A) ::= LP INTLIT(N) RP. { A = p_int(ctx, &N); }
without_tz ::= .
without_tz ::= WITHOUT TIME ZONE.

%type fieldlist {sl_list *}
%type field {sl_type_field *}
fieldlist(A) ::= field(F). { A = p_list1(ctx, F); }
fieldlist(A) ::= fieldlist(L) COMMA field(F). { A = p_push(ctx, L, F); }
field(A) ::= nm(N) type(T). { A = p_type_field(ctx, &N, T); }
field(A) ::= nm(N) type(T) STRLIT. { A = p_type_field(ctx, &N, T); }

/* ---- queries ------------------------------------------------------------- */

%type query {sl_query *}
%type body {sl_query_body *}
%type body_term {sl_query_body *}
%type body_primary {sl_query_body *}

query(A) ::= body(B) order_opt(O) limit_opt(L). {
  A = p_query(ctx, B->span, NULL, B, O, L);
}
query(A) ::= WITH(W) ctelist(C) body(B) order_opt(O) limit_opt(L). {
  A = p_query(ctx, TSPAN(W), C, B, O, L);
}

%type ctelist {sl_list *}
%type cte {sl_cte *}
ctelist(A) ::= cte(C). { A = p_list1(ctx, C); }
ctelist(A) ::= ctelist(L) COMMA cte(C). { A = p_push(ctx, L, C); }
cte(A) ::= nm(N) AS LP query(Q) RP. {
  A = SL_ANEW(ctx->arena, sl_cte);
  A->name = p_ident(ctx, &N);
  A->query = Q;
  A->span = FROMSPAN(TSPAN(N));
}
cte(A) ::= nm(N) LP namelist(C) RP AS LP query(Q) RP. {
  A = SL_ANEW(ctx->arena, sl_cte);
  A->name = p_ident(ctx, &N);
  A->columns = C;
  A->query = Q;
  A->span = FROMSPAN(TSPAN(N));
}

/* Set operations: INTERSECT binds tighter than UNION and EXCEPT. */
body(A) ::= body_term(A).
body(A) ::= body(L) UNION setq(Q) body_term(R). {
  A = p_body_setop(ctx, SL_SETOP_UNION, Q, L, R);
}
body(A) ::= body(L) EXCEPT setq(Q) body_term(R). {
  A = p_body_setop(ctx, SL_SETOP_EXCEPT, Q, L, R);
}
body_term(A) ::= body_primary(A).
body_term(A) ::= body_term(L) INTERSECT setq(Q) body_primary(R). {
  A = p_body_setop(ctx, SL_SETOP_INTERSECT, Q, L, R);
}
%type setq {bool}
setq(A) ::= . { A = false; }
setq(A) ::= ALL. { A = true; }
setq(A) ::= DISTINCT. { A = false; }

body_primary(A) ::= select(S). { A = p_body_select(ctx, S); }
body_primary(A) ::= VALUES(K) rowlist(R). {
  A = SL_ANEW(ctx->arena, sl_query_body);
  A->kind = SL_SETOP_VALUES;
  A->values = R;
  A->span = FROMSPAN(TSPAN(K));
}
body_primary(A) ::= LP(P) query(Q) RP. [INTERSECT] { A = p_body_nested(ctx, &P, Q); }

%type rowlist {sl_list *}
rowlist(A) ::= LP exprlist(R) RP. { A = p_list1(ctx, R); }
rowlist(A) ::= rowlist(L) COMMA LP exprlist(R) RP. { A = p_push(ctx, L, R); }

%type select {sl_select *}
select(A) ::= SELECT(K) distinct(D) selitems(I) from(F) where(W) groupby(G)
              having(H). {
  A = SL_ANEW(ctx->arena, sl_select);
  A->distinct = D;
  A->items = I;
  A->from = F;
  A->where = W;
  A->group_by = G;
  A->having = H;
  A->span = FROMSPAN(TSPAN(K));
}
%type distinct {bool}
distinct(A) ::= . { A = false; }
distinct(A) ::= DISTINCT. { A = true; }
distinct(A) ::= ALL. { A = false; }

%type selitems {sl_list *}
%type selitem {sl_select_item *}
selitems(A) ::= selitem(I). { A = p_list1(ctx, I); }
selitems(A) ::= selitems(L) COMMA selitem(I). { A = p_push(ctx, L, I); }
selitem(A) ::= expr(E). {
  A = SL_ANEW(ctx->arena, sl_select_item);
  A->expr = E;
  A->span = E->span;
}
selitem(A) ::= expr(E) nm(N). {
  A = SL_ANEW(ctx->arena, sl_select_item);
  A->expr = E;
  A->alias = p_ident(ctx, &N);
  A->span = FROMSPAN(E->span);
}
selitem(A) ::= expr(E) AS nm(N). {
  A = SL_ANEW(ctx->arena, sl_select_item);
  A->expr = E;
  A->alias = p_ident(ctx, &N);
  A->span = FROMSPAN(E->span);
}
selitem(A) ::= STAR(S). {
  A = SL_ANEW(ctx->arena, sl_select_item);
  A->expr = p_expr(ctx, SL_EXPR_STAR, TSPAN(S));
  A->span = A->expr->span;
}
selitem(A) ::= qname(Q) DOT STAR. {
  A = SL_ANEW(ctx->arena, sl_select_item);
  A->expr = p_expr(ctx, SL_EXPR_STAR, Q->span);
  A->expr->u.star.qualifier = Q;
  A->span = A->expr->span;
}

%type from {sl_table_ref *}
from(A) ::= . { A = NULL; }
from(A) ::= FROM fromlist(L). { A = L; }
%type where {sl_expr *}
where(A) ::= . { A = NULL; }
where(A) ::= WHERE expr(E). { A = E; }
%type groupby {sl_list *}
groupby(A) ::= . { A = NULL; }
groupby(A) ::= GROUP BY exprlist(L). { A = L; }
%type having {sl_expr *}
having(A) ::= . { A = NULL; }
having(A) ::= HAVING expr(E). { A = E; }

%type order_opt {sl_list *}
%type orderlist {sl_list *}
%type orderitem {sl_order_item *}
order_opt(A) ::= . { A = NULL; }
order_opt(A) ::= ORDER BY orderlist(L). { A = L; }
orderlist(A) ::= orderitem(I). { A = p_list1(ctx, I); }
orderlist(A) ::= orderlist(L) COMMA orderitem(I). { A = p_push(ctx, L, I); }
orderitem(A) ::= expr(E) sortdir(D) nulls(N). { A = p_order_item(ctx, E, D, N); }
%type sortdir {int}
sortdir(A) ::= . { A = 0; }
sortdir(A) ::= ASC. { A = 0; }
sortdir(A) ::= DESC. { A = 1; }
%type nulls {int}
nulls(A) ::= . { A = 0; }
nulls(A) ::= NULLS FIRST. { A = 1; }
nulls(A) ::= NULLS LAST. { A = 2; }

/* LIMIT n [OFFSET m], OFFSET m [ROWS] [FETCH FIRST n ROWS ONLY].  The value
 * is a two-element array: limit, offset. */
%type limit_opt {sl_expr **}
limit_opt(A) ::= . { A = NULL; }
limit_opt(A) ::= LIMIT expr(L). { A = p_limits(ctx, L, NULL); }
limit_opt(A) ::= LIMIT expr(L) OFFSET expr(O). { A = p_limits(ctx, L, O); }
limit_opt(A) ::= OFFSET expr(O) rows_opt. { A = p_limits(ctx, NULL, O); }
limit_opt(A) ::= OFFSET expr(O) rows_opt fetch(L). { A = p_limits(ctx, L, O); }
limit_opt(A) ::= fetch(L). { A = p_limits(ctx, L, NULL); }
%type fetch {sl_expr *}
fetch(A) ::= FETCH first_next expr(L) rows_opt ONLY. { A = L; }
first_next ::= FIRST.
first_next ::= NEXT.
rows_opt ::= .
rows_opt ::= ROW.
rows_opt ::= ROWS.

/* ---- FROM ---------------------------------------------------------------- */

%type fromlist {sl_table_ref *}
%type tref {sl_table_ref *}
%type joined {sl_table_ref *}
%type tprimary {sl_table_ref *}

fromlist(A) ::= tref(A).
fromlist(A) ::= fromlist(L) COMMA tref(R). {
  A = p_join(ctx, SL_JOIN_CROSS, false, L, R);
  A->u.join.comma = true;
}
tref(A) ::= tprimary(A).
tref(A) ::= joined(A).

joined(A) ::= tref(L) join_kind(K) JOIN tprimary(R) join_cond(C). {
  A = p_join(ctx, K, false, L, R);
  A->u.join.on = C ? C->on : NULL;
  A->u.join.using_ = C ? C->using_ : NULL;
}
joined(A) ::= tref(L) CROSS JOIN tprimary(R). {
  A = p_join(ctx, SL_JOIN_CROSS, false, L, R);
}
joined(A) ::= tref(L) NATURAL join_kind(K) JOIN tprimary(R). {
  A = p_join(ctx, K, true, L, R);
}
%type join_kind {sl_join_kind}
join_kind(A) ::= . { A = SL_JOIN_INNER; }
join_kind(A) ::= INNER. { A = SL_JOIN_INNER; }
join_kind(A) ::= LEFT outer_opt. { A = SL_JOIN_LEFT; }
join_kind(A) ::= RIGHT outer_opt. { A = SL_JOIN_RIGHT; }
join_kind(A) ::= FULL outer_opt. { A = SL_JOIN_FULL; }
outer_opt ::= .
outer_opt ::= OUTER.
/* The condition travels in a scratch join node's on/using_ fields. */
%type join_cond {p_join_cond *}
join_cond(A) ::= . { A = NULL; }
join_cond(A) ::= ON expr(E). {
  A = SL_ANEW(ctx->arena, p_join_cond);
  A->on = E;
}
join_cond(A) ::= USING LP namelist(L) RP. {
  A = SL_ANEW(ctx->arena, p_join_cond);
  A->using_ = L;
}

tprimary(A) ::= qname(N) systime(T) alias(L). {
  A = p_tref(ctx, SL_TREF_NAME, N->span);
  A->u.name.name = *N;
  A->u.name.system_time = T;
  p_alias(ctx, A, L);
}
tprimary(A) ::= LP(P) query(Q) RP alias(L). {
  A = p_tref(ctx, SL_TREF_SUBQUERY, TSPAN(P));
  A->u.subquery.query = Q;
  p_alias(ctx, A, L);
}
tprimary(A) ::= LATERAL(P) LP query(Q) RP alias(L). {
  A = p_tref(ctx, SL_TREF_SUBQUERY, TSPAN(P));
  A->u.subquery.query = Q;
  A->u.subquery.lateral = true;
  p_alias(ctx, A, L);
}
tprimary(A) ::= TABLE(T) LP qname(F) LP tvfargs(G) RP RP alias(L). {
  A = p_tref(ctx, SL_TREF_TVF, TSPAN(T));
  A->u.tvf.func = *F;
  A->u.tvf.args = G;
  p_alias(ctx, A, L);
}
tprimary(A) ::= LATERAL(T) TABLE LP qname(F) LP tvfargs(G) RP RP alias(L). {
  A = p_tref(ctx, SL_TREF_TVF, TSPAN(T));
  A->u.tvf.func = *F;
  A->u.tvf.args = G;
  p_alias(ctx, A, L);
}
tprimary(A) ::= LP(P) joined(J) RP alias(L). {
  A = J;
  A->span = FROMSPAN(TSPAN(P));
  p_alias(ctx, A, L);
}

%type systime {sl_expr *}
systime(A) ::= . { A = NULL; }
systime(A) ::= FOR SYSTEM_TIME AS OF expr(E). { A = E; }

/* [AS] alias [(c1, c2)]: a list whose first item is the alias and whose
 * other items are the column aliases; NULL without alias. */
%type alias {sl_list *}
alias(A) ::= . { A = NULL; }
alias(A) ::= nm(N). { A = p_names1(ctx, &N); }
alias(A) ::= AS nm(N). { A = p_names1(ctx, &N); }
alias(A) ::= nm(N) LP namelist(C) RP. { A = p_alias_list(ctx, &N, C); }
alias(A) ::= AS nm(N) LP namelist(C) RP. { A = p_alias_list(ctx, &N, C); }

%type tvfargs {sl_list *}
%type tvfarg {sl_tvf_arg *}
%type tvfval {sl_tvf_arg *}
tvfargs(A) ::= . { A = NULL; }
tvfargs(A) ::= tvfarg(X). { A = p_list1(ctx, X); }
tvfargs(A) ::= tvfargs(L) COMMA tvfarg(X). { A = p_tvf_push(ctx, L, X); }
tvfarg(A) ::= tvfval(A).
tvfarg(A) ::= nm(N) ARROW tvfval(V). {
  A = V;
  A->name = p_ident(ctx, &N);
  A->span = FROMSPAN(TSPAN(N));
}
tvfval(A) ::= TABLE(T) qname(N). {
  A = SL_ANEW(ctx->arena, sl_tvf_arg);
  A->table_arg = N;
  A->span = FROMSPAN(TSPAN(T));
}
tvfval(A) ::= TABLE(T) qname(N) PARTITION BY expr(K). {
  A = SL_ANEW(ctx->arena, sl_tvf_arg);
  A->table_arg = N;
  A->partition_by = p_list1(ctx, K);
  A->span = FROMSPAN(TSPAN(T));
}
tvfval(A) ::= TABLE(T) qname(N) PARTITION BY LP expr(K) COMMA exprlist(L) RP. {
  A = SL_ANEW(ctx->arena, sl_tvf_arg);
  A->table_arg = N;
  A->partition_by = p_list1(ctx, K);
  for (int i = 0; i < SL_LIST_LEN(L); i++)
    sl_list_push(ctx->arena, A->partition_by, SL_LIST_AT(L, i));
  A->span = FROMSPAN(TSPAN(T));
}
tvfval(A) ::= DESCRIPTOR(D) LP qnamelist(L) RP. {
  A = SL_ANEW(ctx->arena, sl_tvf_arg);
  A->descriptor = L;
  A->span = FROMSPAN(TSPAN(D));
}
tvfval(A) ::= expr(E). {
  A = SL_ANEW(ctx->arena, sl_tvf_arg);
  A->expr = E;
  A->span = E->span;
}
%type qnamelist {sl_list *}
qnamelist(A) ::= qname(Q). { A = p_list1(ctx, Q); }
qnamelist(A) ::= qnamelist(L) COMMA qname(Q). { A = p_push(ctx, L, Q); }

/* ---- expressions --------------------------------------------------------- */

%type expr {sl_expr *}
%type term {sl_expr *}
%type fterm {sl_expr *}
%type exprlist {sl_list *}

exprlist(A) ::= expr(E). { A = p_list1(ctx, E); }
exprlist(A) ::= exprlist(L) COMMA expr(E). { A = p_push(ctx, L, E); }

expr(A) ::= term(A).
expr(A) ::= expr(L) OR expr(R). { A = p_binary(ctx, SL_OP_OR, L, R); }
expr(A) ::= expr(L) AND expr(R). { A = p_binary(ctx, SL_OP_AND, L, R); }
expr(A) ::= NOT(K) expr(E). { A = p_unary(ctx, SL_OP_NOT, &K, E); }
expr(A) ::= expr(L) EQ expr(R). { A = p_binary(ctx, SL_OP_EQ, L, R); }
expr(A) ::= expr(L) NE expr(R). { A = p_binary(ctx, SL_OP_NE, L, R); }
expr(A) ::= expr(L) LT expr(R). { A = p_binary(ctx, SL_OP_LT, L, R); }
expr(A) ::= expr(L) LE expr(R). { A = p_binary(ctx, SL_OP_LE, L, R); }
expr(A) ::= expr(L) GT expr(R). { A = p_binary(ctx, SL_OP_GT, L, R); }
expr(A) ::= expr(L) GE expr(R). { A = p_binary(ctx, SL_OP_GE, L, R); }
expr(A) ::= expr(L) PLUS expr(R). { A = p_binary(ctx, SL_OP_ADD, L, R); }
expr(A) ::= expr(L) MINUS expr(R). { A = p_binary(ctx, SL_OP_SUB, L, R); }
expr(A) ::= expr(L) CONCAT expr(R). { A = p_binary(ctx, SL_OP_CONCAT, L, R); }
expr(A) ::= expr(L) STAR expr(R). { A = p_binary(ctx, SL_OP_MUL, L, R); }
expr(A) ::= expr(L) SLASH expr(R). { A = p_binary(ctx, SL_OP_DIV, L, R); }
expr(A) ::= expr(L) PERCENT expr(R). { A = p_binary(ctx, SL_OP_MOD, L, R); }
expr(A) ::= MINUS(K) expr(E). [UMINUS] { A = p_unary(ctx, SL_OP_NEG, &K, E); }
expr(A) ::= PLUS(K) expr(E). [UMINUS] { A = p_unary(ctx, SL_OP_PLUS, &K, E); }

expr(A) ::= expr(X) IS is_what(W). {
  A = p_expr(ctx, SL_EXPR_IS, X->span);
  A->u.is.operand = X;
  A->u.is.what = W;
}
expr(A) ::= expr(X) IS NOT is_what(W). {
  A = p_expr(ctx, SL_EXPR_IS, X->span);
  A->u.is.operand = X;
  A->u.is.what = W;
  A->u.is.negated = true;
}
%type is_what {sl_is_what}
is_what(A) ::= NULL. { A = SL_IS_NULL; }
is_what(A) ::= TRUE. { A = SL_IS_TRUE; }
is_what(A) ::= FALSE. { A = SL_IS_FALSE; }
is_what(A) ::= UNKNOWN. { A = SL_IS_UNKNOWN; }

/* The BETWEEN rule's AND is resolved against logical AND by precedence:
 * `a BETWEEN b AND c AND d` is `(a BETWEEN b AND c) AND d`. */
expr(A) ::= expr(X) between_op(N) expr(L) AND expr(H). [BETWEEN] {
  A = p_expr(ctx, SL_EXPR_BETWEEN, X->span);
  A->u.between.operand = X;
  A->u.between.low = L;
  A->u.between.high = H;
  A->u.between.negated = (N & 1) != 0;
  A->u.between.symmetric = (N & 2) != 0;
}
%type between_op {int}
between_op(A) ::= BETWEEN sym(S). { A = S; }
between_op(A) ::= NOT BETWEEN sym(S). { A = 1 | S; }
%type sym {int}
sym(A) ::= . { A = 0; }
sym(A) ::= SYMMETRIC. { A = 2; }
sym(A) ::= ASYMMETRIC. { A = 0; }

expr(A) ::= expr(X) in_op(N) LP exprlist(L) RP. [IN] {
  A = p_expr(ctx, SL_EXPR_IN_LIST, X->span);
  A->u.in_list.operand = X;
  A->u.in_list.values = L;
  A->u.in_list.negated = N;
}
expr(A) ::= expr(X) in_op(N) LP query(Q) RP. [IN] {
  A = p_subquery(ctx, SL_SUBQ_IN, X->span, Q, X, N);
}
%type in_op {bool}
in_op(A) ::= IN. { A = false; }
in_op(A) ::= NOT IN. { A = true; }

expr(A) ::= expr(X) like_op(N) expr(P). [LIKE] {
  A = p_expr(ctx, SL_EXPR_LIKE, X->span);
  A->u.like.operand = X;
  A->u.like.pattern = P;
  A->u.like.negated = (N & 1) != 0;
  A->u.like.similar = (N & 2) != 0;
}
expr(A) ::= expr(X) like_op(N) expr(P) ESCAPE expr(E). [LIKE] {
  A = p_expr(ctx, SL_EXPR_LIKE, X->span);
  A->u.like.operand = X;
  A->u.like.pattern = P;
  A->u.like.escape = E;
  A->u.like.negated = (N & 1) != 0;
  A->u.like.similar = (N & 2) != 0;
}
%type like_op {int}
like_op(A) ::= LIKE. { A = 0; }
like_op(A) ::= NOT LIKE. { A = 1; }
like_op(A) ::= SIMILAR TO. { A = 2; }
like_op(A) ::= NOT SIMILAR TO. { A = 3; }

term(A) ::= fterm(A).
term(A) ::= qname(Q). { A = p_name(ctx, Q); }
/* DATE, TIME and TIMESTAMP start literals and calls, but are also common
 * column names. */
term(A) ::= DATE(K). { A = p_name(ctx, p_qname_word(ctx, &K)); }
term(A) ::= TIME(K). { A = p_name(ctx, p_qname_word(ctx, &K)); }
term(A) ::= TIMESTAMP(K). { A = p_name(ctx, p_qname_word(ctx, &K)); }

/* Terms that are not plain names; only these take `.field` (a name's dots
 * are part of the name). */
fterm(A) ::= fterm(B) DOT nm(N). { A = p_field(ctx, B, &N); }
fterm(A) ::= INTLIT(X). { A = p_literal(ctx, SL_LIT_INTEGER, &X); }
fterm(A) ::= DECLIT(X). { A = p_literal(ctx, SL_LIT_DECIMAL, &X); }
fterm(A) ::= FLOATLIT(X). { A = p_literal(ctx, SL_LIT_DOUBLE, &X); }
fterm(A) ::= STRLIT(X). { A = p_literal(ctx, SL_LIT_STRING, &X); }
fterm(A) ::= NULL(X). { A = p_literal(ctx, SL_LIT_NULL, &X); }
fterm(A) ::= TRUE(X). {
  A = p_literal(ctx, SL_LIT_BOOL, &X);
  A->u.lit.bool_value = true;
}
fterm(A) ::= FALSE(X). { A = p_literal(ctx, SL_LIT_BOOL, &X); }
fterm(A) ::= DATE(K) STRLIT(S). { A = p_typed_literal(ctx, SL_LIT_DATE, &K, &S); }
fterm(A) ::= TIME(K) STRLIT(S). { A = p_typed_literal(ctx, SL_LIT_TIME, &K, &S); }
fterm(A) ::= TIMESTAMP(K) STRLIT(S). {
  A = p_typed_literal(ctx, SL_LIT_TIMESTAMP, &K, &S);
}
fterm(A) ::= INTERVAL(K) interval_val(V) interval_qualifier(Q). {
  A = p_interval(ctx, &K, &V.tok, V.negative, Q);
}
%type interval_val {p_interval_val}
interval_val(A) ::= STRLIT(S). { A.tok = S; A.negative = false; }
interval_val(A) ::= INTLIT(S). { A.tok = S; A.negative = false; }
interval_val(A) ::= MINUS STRLIT(S). { A.tok = S; A.negative = true; }
interval_val(A) ::= PLUS STRLIT(S). { A.tok = S; A.negative = false; }

%type interval_qualifier {p_unit_spec}
interval_qualifier(A) ::= unit(U) prec_opt(P). {
  A.unit = U;
  A.to_unit = SL_UNIT_NONE;
  A.precision = P;
}
interval_qualifier(A) ::= unit(U) prec_opt(P) TO unit(T) prec_opt(Q). {
  A.unit = U;
  A.to_unit = T;
  A.precision = Q >= 0 ? Q : P;
}
%type unit {sl_interval_unit}
unit(A) ::= YEAR. { A = SL_UNIT_YEAR; }
unit(A) ::= YEARS. { A = SL_UNIT_YEAR; }
unit(A) ::= MONTH. { A = SL_UNIT_MONTH; }
unit(A) ::= MONTHS. { A = SL_UNIT_MONTH; }
unit(A) ::= DAY. { A = SL_UNIT_DAY; }
unit(A) ::= DAYS. { A = SL_UNIT_DAY; }
unit(A) ::= HOUR. { A = SL_UNIT_HOUR; }
unit(A) ::= HOURS. { A = SL_UNIT_HOUR; }
unit(A) ::= MINUTE. { A = SL_UNIT_MINUTE; }
unit(A) ::= MINUTES. { A = SL_UNIT_MINUTE; }
unit(A) ::= SECOND. { A = SL_UNIT_SECOND; }
unit(A) ::= SECONDS. { A = SL_UNIT_SECOND; }
unit(A) ::= MILLISECOND. { A = SL_UNIT_MILLISECOND; }

fterm(A) ::= LP(P) expr(E) RP. { A = p_paren(ctx, &P, E); }
/* ((SELECT 1)) could be a parenthesised query or a parenthesised scalar
 * subquery; the [INTERSECT] precedence on body_primary picks the former. */
fterm(A) ::= LP(P) query(Q) RP. [UNION] {
  A = p_subquery(ctx, SL_SUBQ_SCALAR, TSPAN(P), Q, NULL, false);
}
fterm(A) ::= EXISTS(K) LP query(Q) RP. {
  A = p_subquery(ctx, SL_SUBQ_EXISTS, TSPAN(K), Q, NULL, false);
}

fterm(A) ::= CASE(K) case_operand(O) whenlist(W) else_opt(E) END. {
  A = p_expr(ctx, SL_EXPR_CASE, TSPAN(K));
  A->u.case_.operand = O;
  A->u.case_.whens = W;
  A->u.case_.else_expr = E;
}
%type case_operand {sl_expr *}
case_operand(A) ::= . { A = NULL; }
case_operand(A) ::= expr(A).
%type whenlist {sl_list *}
%type when {sl_when *}
whenlist(A) ::= when(W). { A = p_list1(ctx, W); }
whenlist(A) ::= whenlist(L) when(W). { A = p_push(ctx, L, W); }
when(A) ::= WHEN expr(C) THEN expr(R). {
  A = SL_ANEW(ctx->arena, sl_when);
  A->when = C;
  A->then = R;
}
%type else_opt {sl_expr *}
else_opt(A) ::= . { A = NULL; }
else_opt(A) ::= ELSE expr(E). { A = E; }

fterm(A) ::= CAST(K) LP expr(E) AS type(T) RP. {
  A = p_expr(ctx, SL_EXPR_CAST, TSPAN(K));
  A->u.cast.operand = E;
  A->u.cast.type = T;
}
fterm(A) ::= TRY_CAST(K) LP expr(E) AS type(T) RP. {
  A = p_expr(ctx, SL_EXPR_CAST, TSPAN(K));
  A->u.cast.operand = E;
  A->u.cast.type = T;
  A->u.cast.try_cast = true;
}

/* Function calls: f(), COUNT(*), f([DISTINCT|ALL] a, ...), then an optional
 * FILTER (WHERE ...) and OVER (...). */
fterm(A) ::= qname(N) LP callargs(G) RP filter(F) over(O). {
  A = p_call(ctx, N, G.args, N->span);
  A->u.call.star = G.star;
  A->u.call.distinct = G.distinct;
  A->u.call.filter = F;
  A->u.call.over = O;
}
%type callargs {p_call_args}
callargs(A) ::= . { memset(&A, 0, sizeof(A)); }
callargs(A) ::= STAR. { memset(&A, 0, sizeof(A)); A.star = true; }
callargs(A) ::= exprlist(L). { memset(&A, 0, sizeof(A)); A.args = L; }
callargs(A) ::= ALL exprlist(L). { memset(&A, 0, sizeof(A)); A.args = L; }
callargs(A) ::= DISTINCT exprlist(L). {
  memset(&A, 0, sizeof(A));
  A.args = L;
  A.distinct = true;
}
/* Keywords that are also function names. */
fterm(A) ::= kwfunc(N) LP exprlist(L) RP. { A = p_call_word(ctx, &N, L); }
fterm(A) ::= kwfunc(N) LP RP. { A = p_call_word(ctx, &N, NULL); }
%type kwfunc {sl_token}
kwfunc(A) ::= LEFT(X). { A = X; }
kwfunc(A) ::= RIGHT(X). { A = X; }
kwfunc(A) ::= DATE(X). { A = X; }
kwfunc(A) ::= TIME(X). { A = X; }
kwfunc(A) ::= TIMESTAMP(X). { A = X; }
kwfunc(A) ::= INSERT(X). { A = X; }
/* Niladic functions written without parentheses. */
fterm(A) ::= niladic(N). { A = p_call_word(ctx, &N, NULL); }
%type niladic {sl_token}
niladic(A) ::= CURRENT_TIMESTAMP(X). { A = X; }
niladic(A) ::= CURRENT_DATE(X). { A = X; }
niladic(A) ::= CURRENT_TIME(X). { A = X; }
niladic(A) ::= LOCALTIMESTAMP(X). { A = X; }
niladic(A) ::= LOCALTIME(X). { A = X; }

/* SQL's special call syntaxes, kept as plain calls (see ast.h). */
fterm(A) ::= SUBSTRING(K) LP expr(S) FROM expr(F) RP. {
  A = p_call_word(ctx, &K, p_push(ctx, p_list1(ctx, S), F));
}
fterm(A) ::= SUBSTRING(K) LP expr(S) FROM expr(F) FOR expr(N) RP. {
  A = p_call_word(ctx, &K, p_push(ctx, p_push(ctx, p_list1(ctx, S), F), N));
}
fterm(A) ::= SUBSTRING(K) LP exprlist(L) RP. { A = p_call_word(ctx, &K, L); }
fterm(A) ::= EXTRACT(K) LP unit(U) FROM expr(E) RP. {
  A = p_call_word(ctx, &K, p_list1(ctx, E));
  A->u.call.unit = U;
}
/* TRIM: args are the string, then the characters to trim if given. */
fterm(A) ::= TRIM(K) LP trim_side(S) expr(C) FROM expr(E) RP. {
  A = p_call_word(ctx, &K, p_push(ctx, p_list1(ctx, E), C));
  A->u.call.trim_side = S;
}
fterm(A) ::= TRIM(K) LP trim_side(S) FROM expr(E) RP. {
  A = p_call_word(ctx, &K, p_list1(ctx, E));
  A->u.call.trim_side = S;
}
fterm(A) ::= TRIM(K) LP expr(C) FROM expr(E) RP. {
  A = p_call_word(ctx, &K, p_push(ctx, p_list1(ctx, E), C));
}
fterm(A) ::= TRIM(K) LP expr(E) RP. { A = p_call_word(ctx, &K, p_list1(ctx, E)); }
%type trim_side {int}
trim_side(A) ::= BOTH. { A = 0; }
trim_side(A) ::= LEADING. { A = 1; }
trim_side(A) ::= TRAILING. { A = 2; }
/* POSITION's first operand is a term so that its IN is not taken for the
 * IN predicate. */
fterm(A) ::= POSITION(K) LP term(N) IN expr(H) RP. {
  A = p_call_word(ctx, &K, p_push(ctx, p_list1(ctx, N), H));
}
fterm(A) ::= POSITION(K) LP term(N) COMMA expr(H) RP. {
  A = p_call_word(ctx, &K, p_push(ctx, p_list1(ctx, N), H));
}

%type filter {sl_expr *}
filter(A) ::= . { A = NULL; }
filter(A) ::= FILTER LP WHERE expr(E) RP. { A = E; }
%type over {sl_over *}
over(A) ::= . { A = NULL; }
over(A) ::= OVER(K) LP partition_opt(P) order_opt(O) RP. {
  A = SL_ANEW(ctx->arena, sl_over);
  A->partition_by = P;
  A->order_by = O;
  A->span = FROMSPAN(TSPAN(K));
}
%type partition_opt {sl_list *}
partition_opt(A) ::= . { A = NULL; }
partition_opt(A) ::= PARTITION BY exprlist(L). { A = L; }
