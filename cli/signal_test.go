package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// bigFixture writes inputs large enough that a signal lands mid-run: a CTF
// corpus, an edge list, and a graph config (relative paths) beside them.
type bigFixture struct {
	dir, corpus, edges, small, cfg, bigCfg string
}

func newBigFixture(t *testing.T, lines, edges int) bigFixture {
	t.Helper()
	d := t.TempDir()
	f := bigFixture{dir: d, corpus: "c.ctf", edges: "edges.tsv", small: "small.tsv", cfg: "g.toml", bigCfg: "big.toml"}
	var b strings.Builder
	for i := 0; i < lines; i++ {
		fmt.Fprintf(&b, "%d |x %d %d\n", i, i%13, i%7)
	}
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(d, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(f.corpus, b.String())
	b.Reset()
	for i := 0; i < edges; i++ {
		fmt.Fprintf(&b, "n%d\tr%d\tn%d\n", (i*7919)%5003, i%3, (i*104729)%4999)
	}
	write(f.edges, b.String())
	b.Reset()
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&b, "n%d\tr%d\tn%d\n", i%31, i%3, (i*3)%29)
	}
	write(f.small, b.String())
	graphKeys := `workers = 2
batch_size = 5
num_epochs = 2
[entities.n]
num_partitions = 4
[[relations]]
name = "r0"
lhs = "n"
rhs = "n"
[[relations]]
name = "r1"
lhs = "n"
rhs = "n"
[[relations]]
name = "r2"
lhs = "n"
rhs = "n"
`
	write(f.cfg, "entity_path = \"ent\"\nedge_paths = [\"edges\"]\n"+graphKeys)
	write(f.bigCfg, "entity_path = \"bigent\"\nedge_paths = [\"bigedges\"]\n"+graphKeys)
	return f
}

// onlyBatches keeps the plan's batch records: a bucket interrupted between
// batches is printed again on resume (marked resumed), its batches are not.
func onlyBatches(out string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(out, "\n") {
		if strings.Contains(l, `"kind":"batch"`) {
			b.WriteString(l)
		}
	}
	return b.String()
}

// waitFor polls cond every few milliseconds for up to 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// SIGINT and SIGTERM during import, read and
// plan stop cleanly: exit 130 / 143, no temporary file left, the previous
// store kept (import), and a state that resumes to exactly the rest of the
// uninterrupted output (read, plan).
func TestSignalsStopCleanly(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes; skipped with -short")
	}
	f := newBigFixture(t, 60000, 150000)
	if code, _, e := runChild(t, f.dir, "import", "--config", f.cfg, "--rel-col", "1", "--quiet", f.small); code != 0 {
		t.Fatal(e)
	}
	old := takeFileSet(t, f.dir, "ent", "edges")
	if code, _, e := runChild(t, f.dir, "import", "--config", f.bigCfg, "--rel-col", "1", "--quiet", f.edges); code != 0 {
		t.Fatal(e)
	}
	readArgs := []string{"read", f.corpus, "--stream", "x:2", "--mb", "1", "--quiet", "--randomize", "none"}
	planArgs := []string{"plan", "--config", f.bigCfg, "--quiet"}
	_, fullRead, _ := runChild(t, f.dir, readArgs...)
	_, fullPlan, _ := runChild(t, f.dir, planArgs...)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		want := 128 + int(sig)
		t.Run(signalName(sig)+"/import", func(t *testing.T) {
			cmd := child(t, f.dir, "import", "--config", f.cfg, "--rel-col", "1", "--quiet", f.edges)
			var e bytes.Buffer
			cmd.Stderr = &e
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the import's staging directory", func() bool {
				m, _ := filepath.Glob(filepath.Join(f.dir, ".edges.batchprep-tmp-*"))
				return len(m) > 0
			})
			cmd.Process.Signal(sig)
			cmd.Wait()
			if code := cmd.ProcessState.ExitCode(); code != want || !strings.Contains(e.String(), "interrupted by "+signalName(sig)) {
				t.Fatalf("exit %d (want %d), stderr %q", code, want, e.String())
			}
			now := takeFileSet(t, f.dir, "ent", "edges")
			if !now.equal(old) || len(now.hidden) > 0 {
				t.Errorf("after the signal the store changed or temporaries stayed: %v\n%s", now.hidden, now)
			}
		})
		for _, c := range []struct {
			name  string
			args  []string
			full  string
			strip func(string) string
		}{
			{"read", readArgs, fullRead, func(s string) string { return s }},
			{"plan", planArgs, fullPlan, onlyBatches},
		} {
			t.Run(signalName(sig)+"/"+c.name, func(t *testing.T) {
				st := "st-" + c.name + ".json"
				cmd, out, e := startChild(t, f.dir, append(c.args, "--state-out", st)...)
				first := make([]byte, 4096)
				n, _ := io.ReadFull(out, first)
				cmd.Process.Signal(sig)
				rest, _ := io.ReadAll(out)
				cmd.Wait()
				got := string(first[:n]) + string(rest)
				if code := cmd.ProcessState.ExitCode(); code != want {
					t.Fatalf("exit %d (want %d), stderr %q", code, want, e.String())
				}
				if len(got) >= len(c.full) {
					t.Fatalf("the run printed everything (%d bytes) before the signal took effect", len(got))
				}
				code, resumed, errOut := runChild(t, f.dir, append(c.args, "--state-in", st)...)
				if code != 0 {
					t.Fatalf("resume: %s", errOut)
				}
				if c.strip(got)+c.strip(resumed) != c.strip(c.full) {
					t.Errorf("interrupted output (%d bytes) + resumed (%d bytes) differ from the uninterrupted run (%d bytes)", len(got), len(resumed), len(c.full))
				}
				if m, _ := filepath.Glob(filepath.Join(f.dir, ".st-*")); len(m) > 0 {
					t.Errorf("temporary files left: %v", m)
				}
			})
		}
	}
}

// A second signal exits at once with 128 + its number, even while the
// first one's clean-up is blocked (here on a full stdout pipe).
func TestSecondSignalExitsAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process; skipped with -short")
	}
	f := newBigFixture(t, 60000, 10)
	cmd, out, e := startChild(t, f.dir, "read", f.corpus, "--stream", "x:2", "--mb", "1", "--quiet")
	first := make([]byte, 4096)
	io.ReadFull(out, first) // the child now blocks writing to the pipe
	cmd.Process.Signal(syscall.SIGINT)
	time.Sleep(50 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("a second signal did not end the blocked run")
	}
	if code := cmd.ProcessState.ExitCode(); code != 143 || !strings.Contains(e.String(), "second signal (SIGTERM)") {
		t.Errorf("exit %d (want 143), stderr %q", code, e.String())
	}
}
