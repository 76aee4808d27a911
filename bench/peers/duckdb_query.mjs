// duckdb_query.mjs - DuckDB as a benchmark peer: load the events once
// (not timed), then run one batch query RUNS times and report each run's
// planning and execution times.
//
//   node bench/peers/duckdb_query.mjs THREADS RUNS OUT LOAD.sql QUERY.sql [csv]
//
// LOAD.sql holds the statements that create and fill the tables (DuckDB's
// read_csv over the files Sluice exported), QUERY.sql the one SELECT (no
// trailing ';' needed).  Each timed run has two parts, timed apart:
//   - setup: con.prepare(SQL), DuckDB's parsing, binding, optimizing and
//     physical planning;
//   - run: the prepared statement executed.
// Without "csv" SQL is the query, executed twice per run: as a streaming
// result whose chunks are fetched one by one and discarded (each chunk's
// rowCount added up, no value converted to JavaScript: the rows are
// computed and handed over but never formatted, as Sluice's go to a
// blackhole), and as a result materialized inside DuckDB (not converted
// either); run_s is the faster of the two (streaming pays a round trip
// through Node per chunk of 2048 rows, a cost of the client, not of
// DuckDB, for results of millions of rows).  Afterwards (not timed) the rows go to OUT as CSV through
// DuckDB's own CSV writer (COPY), for comparing with Sluice's result.
// With "csv" SQL is COPY (query) TO 'OUT' (FORMAT csv, HEADER false), OUT
// deleted before each run: the last run's file holds the rows.
// Prints "load_s S", "input_bytes B" (DuckDB's memory for the loaded
// tables, from duckdb_memory()), then "setup_s S" and "run_s S" per run
// and "rows N" (the rows the last run streamed, or COPY's count) on stdout.
import { readFileSync, rmSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';

const [threads, runs, out, loadFile, queryFile, mode] = process.argv.slice(2);
if (!queryFile || (mode !== undefined && mode !== 'csv')) {
  console.error('usage: duckdb_query.mjs THREADS RUNS OUT LOAD.sql QUERY.sql [csv]');
  process.exit(2);
}
const instance = await DuckDBInstance.create(':memory:', { threads: String(threads) });
const con = await instance.connect();
const now = () => process.hrtime.bigint();
const seconds = (from, to) => Number(to - from) / 1e9;
const copyTo = (sql, path) => `COPY (${sql}) TO '${path.replaceAll("'", "''")}' (FORMAT csv, HEADER false)`;

let t0 = now();
await con.run(readFileSync(loadFile, 'utf8'));
console.log(`load_s ${seconds(t0, now())}`);
const mem = await con.runAndReadAll('SELECT sum(memory_usage_bytes) FROM duckdb_memory()');
console.log(`input_bytes ${String(mem.getRows()[0][0])}`);

const query = readFileSync(queryFile, 'utf8').trim().replace(/;$/, '');
const csv = mode === 'csv';
let rows = 0;
for (let r = 0; r < Number(runs); r++) {
  if (csv) rmSync(out, { force: true });
  t0 = now();
  const prepared = await con.prepare(csv ? copyTo(query, out) : query);
  const t1 = now();
  let copied = null;
  let run = 0;
  if (csv) {
    copied = await prepared.run();
    run = seconds(t1, now());
    rows = Number((await copied.getRows())[0][0]); // COPY's one row: the count
  } else {
    // Streamed and discarded chunk by chunk (each fetch a round trip
    // through Node: costly for millions of rows), and materialized inside
    // DuckDB (more memory, no round trips): the faster of the two counts.
    const result = await prepared.stream();
    rows = 0;
    for (;;) {
      const chunk = await result.fetchChunk();
      if (!chunk || chunk.rowCount === 0) break;
      rows += chunk.rowCount;
    }
    const streamed = seconds(t1, now());
    const t3 = now();
    const whole = await prepared.run();
    const materialized = seconds(t3, now());
    if (whole.rowCount !== rows) {
      console.error(`streamed ${rows} rows but materialized ${whole.rowCount}`);
      process.exit(1);
    }
    console.log(`streamed_s ${streamed}`);
    console.log(`materialized_s ${materialized}`);
    run = Math.min(streamed, materialized);
  }
  prepared.destroySync();
  console.log(`setup_s ${seconds(t0, t1)}`);
  console.log(`run_s ${run}`);
}
console.log(`rows ${rows}`);
if (!csv) await con.run(copyTo(query, out));
