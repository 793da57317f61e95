// Runs the SQL read from standard input in a fresh in-memory DuckDB and
// prints the last statement's result as one JSON object:
// {"columns": [...], "rows": [[...], ...]} with every value in DuckDB's own
// text form, or null. Used by batchprep's Go tests (internal/duckdbtest) as an
// independent Parquet writer and reader; an error goes to stderr with exit 1.
import { DuckDBInstance } from '@duckdb/node-api';

let sql = '';
for await (const chunk of process.stdin) sql += chunk;
try {
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  // Each statement runs in turn; the last one's rows are printed.
  const stmts = await conn.extractStatements(sql);
  if (stmts.count === 0) throw new Error('no SQL statement given');
  let res;
  for (let i = 0; i < stmts.count; i++) {
    const prepared = await stmts.prepare(i);
    res = await prepared.runAndReadAll();
  }
  const rows = res.getRows().map((row) => row.map((v) => (v === null ? null : String(v))));
  process.stdout.write(JSON.stringify({ columns: res.columnNames(), rows }) + '\n');
} catch (e) {
  process.stderr.write(String(e && e.message ? e.message : e) + '\n');
  process.exit(1);
}
