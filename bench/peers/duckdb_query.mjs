// duckdb_query.mjs - DuckDB as a benchmark peer: load the events once
// (not timed), then run one batch query RUNS times and report each run's
// wall time; the last run's rows go to OUT as CSV, for comparing with
// Sluice's result.
//
//   node bench/peers/duckdb_query.mjs THREADS RUNS OUT LOAD.sql QUERY.sql
//
// LOAD.sql holds the statements that create and fill the tables (DuckDB's
// read_csv over the files Sluice exported), QUERY.sql the one SELECT.
// Prints "load_s S" and then "run_s S" per run on stdout.
import { readFileSync, writeFileSync } from 'node:fs';
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

const query = readFileSync(queryFile, 'utf8');
let rows = [];
for (let r = 0; r < Number(runs); r++) {
  t0 = process.hrtime.bigint();
  const reader = await con.runAndReadAll(query);
  rows = reader.getRows();
  console.log(`run_s ${Number(process.hrtime.bigint() - t0) / 1e9}`);
}
writeFileSync(out, rows.map((row) => row.map(String).join(',')).join('\n') + (rows.length ? '\n' : ''));
