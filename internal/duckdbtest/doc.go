// Package duckdbtest runs SQL in DuckDB, through its Node package, so tests
// can write Parquet files with an independent writer and read back what
// batchprep writes.
//
// The harness lives in .ci/duckdb at the module root: package.json and
// package-lock.json pin @duckdb/node-api, install.sh installs it (and
// Debian's nodejs and npm) when missing, and query.mjs runs the SQL given on
// standard input in a fresh in-memory database. .ci/run calls install.sh
// before the tests.
//
// DuckDB cuts Parquet row groups in whole vectors of 2048 rows: ask for
// row_group_size 2048 (or a multiple) and write more rows than that to get
// several row groups.
//
// Invariants (tests cite them by number):
//
//  1. Query returns the last statement's rows, each value in DuckDB's text
//     form (what CAST(x AS VARCHAR) gives), NULL as the string "NULL"; Exec
//     runs the statements and discards the rows. Every call is a fresh
//     in-memory database: state lives only in files the SQL writes.
//  2. When node or the DuckDB package is missing, a test calling Exec or
//     Query skips with a message naming what is missing and how to install
//     it, or fails when the environment requires the shared test inputs
//     (CI=true or BATCHPREP_REQUIRE_SHARED=1, as internal/shared says), so a
//     CI run cannot pass with the independent-writer tests skipped.
//  3. A SQL error fails the test with DuckDB's message and the SQL.
package duckdbtest
