package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// limitWriter accepts n bytes, then fails as a full disk does; a write that
// crosses the limit is cut there.
type limitWriter struct {
	buf bytes.Buffer
	n   int
}

func (w *limitWriter) Write(p []byte) (int, error) {
	if len(p) <= w.n {
		w.n -= len(p)
		return w.buf.Write(p)
	}
	k := w.n
	w.buf.Write(p[:k])
	w.n = 0
	return k, syscall.ENOSPC
}

// When stdout fails, the saved state is never ahead of
// what stdout received, and the complete lines received followed by a
// resume from the state cover the uninterrupted output with nothing lost
// (a few lines may come twice, never none).
func TestReadStateNeverAheadOfOutput(t *testing.T) {
	dir := t.TempDir()
	corpus := filepath.Join(dir, "c.ctf")
	var b strings.Builder
	for i := 0; i < 12000; i++ { // > 1 MiB of JSON lines with --mb 1
		fmt.Fprintf(&b, "%d |x %d\n", i, i%7)
	}
	if err := os.WriteFile(corpus, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{corpus, "--stream", "x:1", "--mb", "1", "--quiet", "--randomize", "none"}
	code, full, errOut := run(t, append([]string{"read"}, base...)...)
	if code != 0 {
		t.Fatal(errOut)
	}
	if len(full) < 1<<20+1<<19 {
		t.Fatalf("the uninterrupted output is only %d bytes; the test needs more than one write", len(full))
	}
	for _, limit := range []int{0, 5000, 1<<20 + 777, len(full) - 10} {
		st := filepath.Join(dir, fmt.Sprintf("st-%d.json", limit))
		w := &limitWriter{n: limit}
		var e bytes.Buffer
		code := Main(append([]string{"read", "--state-out", st}, base...), strings.NewReader(""), w, &e)
		if code != 1 || !strings.Contains(e.String(), "writing output") {
			t.Fatalf("limit %d: code %d, %s", limit, code, e.String())
		}
		got := w.buf.String()
		complete := got[:strings.LastIndexByte(got, '\n')+1]
		code, rest, errOut := run(t, append([]string{"read", "--state-in", st}, base...)...)
		if code != 0 {
			t.Fatalf("limit %d: resume: %s", limit, errOut)
		}
		// The resumed output starts at or before the first line not received.
		if !strings.HasPrefix(full, complete) {
			t.Fatalf("limit %d: received output is not a prefix of the full output", limit)
		}
		if !strings.HasSuffix(full, rest) || len(rest) < len(full)-len(complete) {
			t.Errorf("limit %d: %d bytes received, resume gives %d bytes; the %d bytes between were lost",
				limit, len(complete), len(rest), len(full)-len(complete)-len(rest))
		}
	}
}

// An interrupted read (SIGINT) still writes a state for what was written.
func TestReadInterruptCauseExit130(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(&interrupted{sig: syscall.SIGINT})
	env := &Env{Ctx: ctx, Stderr: &bytes.Buffer{}}
	if code := exitCode(env, "read", context.Cause(ctx)); code != 130 {
		t.Errorf("SIGINT: exit %d, want 130", code)
	}
	ctx, cancel = context.WithCancelCause(context.Background())
	cancel(&interrupted{sig: syscall.SIGTERM})
	env.Ctx = ctx
	if code := exitCode(env, "read", fmt.Errorf("wrapped: %w", context.Cause(ctx))); code != 143 {
		t.Errorf("SIGTERM: exit %d, want 143", code)
	}
}
