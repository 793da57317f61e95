package duckdbtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batchprep/batchprep/internal/shared"
)

// timeout bounds one node process; DuckDB starts in well under a second.
const timeout = 2 * time.Minute

// Null is how Query shows a SQL NULL.
const Null = "NULL"

// harness returns the .ci/duckdb directory beside the nearest go.mod above
// the working directory.
func harness() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, ".ci", "duckdb"), nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("no go.mod above the working directory")
		}
	}
}

// Available reports why DuckDB cannot run here, or nil when it can.
func Available() error {
	dir, err := harness()
	if err != nil {
		return err
	}
	if _, err := exec.LookPath("node"); err != nil {
		return errors.New("node is not installed (bash .ci/duckdb/install.sh installs Debian's nodejs and the DuckDB package)")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@duckdb", "node-api", "package.json")); err != nil {
		return fmt.Errorf("the DuckDB Node package is not installed in %s (run bash .ci/duckdb/install.sh)", dir)
	}
	return nil
}

// Need skips or fails tb as invariant 2 says when DuckDB cannot run.
func Need(tb testing.TB) {
	tb.Helper()
	if err := Available(); err != nil {
		if shared.Required() {
			tb.Fatalf("duckdb harness: %v, and CI requires it", err)
		}
		tb.Skipf("duckdb harness: %v: skipping", err)
	}
}

// Exec runs sql (one or more statements) and discards the result.
func Exec(tb testing.TB, sql string) {
	tb.Helper()
	Query(tb, sql)
}

// Query runs sql and returns the rows of its last statement.
func Query(tb testing.TB, sql string) [][]string {
	tb.Helper()
	_, rows := QueryColumns(tb, sql)
	return rows
}

// QueryColumns is Query that also returns the column names.
func QueryColumns(tb testing.TB, sql string) ([]string, [][]string) {
	tb.Helper()
	Need(tb)
	cols, rows, err := run(sql)
	if err != nil {
		tb.Fatalf("duckdb: %v\nSQL:\n%s", err, sql)
	}
	return cols, rows
}

// run executes sql with query.mjs and decodes its output.
func run(sql string) ([]string, [][]string, error) {
	dir, err := harness()
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "query.mjs")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(sql)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, nil, errors.New(msg)
	}
	var res struct {
		Columns []string    `json:"columns"`
		Rows    [][]*string `json:"rows"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return nil, nil, fmt.Errorf("unreadable output from query.mjs: %v", err)
	}
	rows := make([][]string, len(res.Rows))
	for i, r := range res.Rows {
		rows[i] = make([]string, len(r))
		for j, v := range r {
			if v == nil {
				rows[i][j] = Null
			} else {
				rows[i][j] = *v
			}
		}
	}
	return res.Columns, rows, nil
}

// Quote returns s as a SQL string literal (for file paths in COPY and
// read_parquet).
func Quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
