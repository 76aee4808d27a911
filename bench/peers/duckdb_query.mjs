// duckdb_query.mjs - DuckDB as a benchmark peer: load the events once
// (not timed), then run one batch query RUNS times and report each run's
// wall time; afterwards (not timed) the query's rows go to OUT as CSV, for
// comparing with Sluice's result.
//
//   node bench/peers/duckdb_query.mjs THREADS RUNS OUT LOAD.sql QUERY.sql
//
// LOAD.sql holds the statements that create and fill the tables (DuckDB's
// read_csv over the files Sluice exported), QUERY.sql the one SELECT (no
// trailing ';' needed).  A timed run is the query computed to a
// materialized result inside DuckDB (its rows are not converted to
// JavaScript values, so a result as large as the input costs no more than
// it does in DuckDB itself); OUT is written by DuckDB's own CSV writer
// (COPY), so huge results stream to the file.
// Prints "load_s S", "input_bytes B" (DuckDB's memory for the loaded
// tables, from duckdb_memory()), then "run_s S" per run and "rows N" on
// stdout.
import { readFileSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';

const [threads, runs, out, loadFile, queryFile] = process.argv.slice(2);
if (!queryFile) {
  console.error('usage: duckdb_query.mjs THREADS RUNS OUT LOAD.sql QUERY.sql');
  process.exit(2);
}
const instance = await DuckDBInstance.create(':memory:', { threads: String(threads) });
const con = await instance.connect();

let t0 = process.hrtime.bigint();
await con.run(readFileSync(loadFile, 'utf8'));
console.log(`load_s ${Number(process.hrtime.bigint() - t0) / 1e9}`);
const mem = await con.runAndReadAll('SELECT sum(memory_usage_bytes) FROM duckdb_memory()');
console.log(`input_bytes ${String(mem.getRows()[0][0])}`);

const query = readFileSync(queryFile, 'utf8').trim().replace(/;$/, '');
let rows = 0;
for (let r = 0; r < Number(runs); r++) {
  t0 = process.hrtime.bigint();
  const result = await con.run(query);
  rows = result.rowCount;
  console.log(`run_s ${Number(process.hrtime.bigint() - t0) / 1e9}`);
}
console.log(`rows ${rows}`);
await con.run(`COPY (${query}) TO '${out.replaceAll("'", "''")}' (FORMAT csv, HEADER false)`);
