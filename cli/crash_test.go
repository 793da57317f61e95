package cli

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// crashRuns is how many SIGKILLs landing before the end each writing
// command gets (a kill after the end is a run that finished, which is tried
// again, up to 4 times the count): a handful by default (CI),
// BATCHPREP_CRASH_RUNS for a long run (docs/reliability.md uses 50), 1 with
// -short, 2 under the race detector.
func crashRuns(t *testing.T) int {
	if v := os.Getenv("BATCHPREP_CRASH_RUNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("BATCHPREP_CRASH_RUNS=%q: want a positive count", v)
		}
		return n
	}
	if testing.Short() {
		return 1
	}
	if raceEnabled {
		return 2
	}
	return 4
}

// crashRand returns the generator of the kill moments; BATCHPREP_CRASH_SEED
// replays a run (the seed is logged).
func crashRand(t *testing.T) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("BATCHPREP_CRASH_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("BATCHPREP_CRASH_SEED=%q", v)
		}
		seed = s
	}
	t.Logf("kill moments from BATCHPREP_CRASH_SEED=%d", seed)
	return rand.New(rand.NewPCG(seed, 0x5eed))
}

// killAt starts args, SIGKILLs the child after d (or lets it finish first)
// and reports whether the kill landed before the child ended.
func killAt(t *testing.T, dir string, d time.Duration, args ...string) bool {
	t.Helper()
	cmd := child(t, dir, args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
		return false
	case <-time.After(d):
		cmd.Process.Signal(syscall.SIGKILL)
		<-done
		return cmd.ProcessState.ExitCode() != 0
	}
}

// timed runs args to the end and returns how long that took.
func timed(t *testing.T, dir string, args ...string) time.Duration {
	t.Helper()
	start := time.Now()
	if code, _, e := runChild(t, dir, args...); code != 0 {
		t.Fatalf("%v: %s", args, e)
	}
	return time.Since(start)
}

// Every writing command is SIGKILLed at random
// moments. Each file on disk is then the old complete version or the new
// complete version (checked by hash, file by file), the store opens as the
// old or the new one or is refused as interrupted (never read mixed), and
// running the command again gives exactly the uninterrupted result with no
// leftover left behind.
func TestCrashImport(t *testing.T) {
	f := newBigFixture(t, 10, 60000)
	rng := crashRand(t)
	importA := []string{"import", "--config", f.cfg, "--rel-col", "1", "--quiet", f.small}
	importB := []string{"import", "--config", f.cfg, "--rel-col", "1", "--quiet", f.edges}
	timed(t, f.dir, importA...)
	a := takeFileSet(t, f.dir, "ent", "edges")
	_, planA, _ := runChild(t, f.dir, "plan", "--config", f.cfg, "--quiet", "--format", "summary")
	dur := timed(t, f.dir, importB...)
	b := takeFileSet(t, f.dir, "ent", "edges")
	_, planB, _ := runChild(t, f.dir, "plan", "--config", f.cfg, "--quiet", "--format", "summary")
	killed, runs := 0, crashRuns(t)
	outcomes := map[string]int{}
	defer func() { t.Logf("after the kill the store opened as: %v", outcomes) }()
	for attempt := 0; killed < runs && attempt < 4*runs; attempt++ {
		timed(t, f.dir, importA...)
		if now := takeFileSet(t, f.dir, "ent", "edges"); !now.equal(a) {
			t.Fatal("re-importing A does not give A")
		}
		d := time.Duration(rng.Int64N(int64(dur) + 1))
		if killAt(t, f.dir, d, importB...) {
			killed++
		}
		now := takeFileSet(t, f.dir, "ent", "edges")
		for name, h := range now.files {
			if h != a.files[name] && h != b.files[name] {
				t.Errorf("kill at %v: %s is neither the old nor the new version", d, name)
			}
		}
		code, out, errOut := runChild(t, f.dir, "plan", "--config", f.cfg, "--quiet", "--format", "summary")
		switch {
		case code != 0:
			outcomes["refused as interrupted"]++
		case cutSeconds(out) == cutSeconds(planA):
			outcomes["old store"]++
		case cutSeconds(out) == cutSeconds(planB):
			outcomes["new store"]++
		}
		switch {
		case code == 0 && cutSeconds(out) != cutSeconds(planA) && cutSeconds(out) != cutSeconds(planB):
			t.Errorf("kill at %v: the store opens as neither the old nor the new one:\n%s", d, out)
		case code != 0 && !strings.Contains(errOut, "interrupted") && !strings.Contains(errOut, "another import"):
			t.Errorf("kill at %v: the store is refused without saying an import was interrupted: %s", d, errOut)
		}
		timed(t, f.dir, importB...)
		if now := takeFileSet(t, f.dir, "ent", "edges"); !now.equal(b) || len(now.hidden) > 0 {
			t.Errorf("kill at %v: re-running the import does not give the uninterrupted store (leftovers %v)", d, now.hidden)
		}
	}
	t.Logf("%d runs killed before the end (wanted %d)", killed, runs)
}

// cutSeconds drops the timing lines of a plan summary.
func cutSeconds(s string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if !strings.HasPrefix(l, "seconds:") && !strings.HasPrefix(l, "edges/s:") {
			b.WriteString(l)
		}
	}
	return b.String()
}

// TestCrashStateOut kills read --state-out and plan --state-out: the state
// file is the old one or the new one, byte for byte; the run repeated from
// what is on disk gives the uninterrupted output and state.
func TestCrashStateOut(t *testing.T) {
	f := newBigFixture(t, 40000, 20000)
	if code, _, e := runChild(t, f.dir, "import", "--config", f.bigCfg, "--rel-col", "1", "--quiet", f.edges); code != 0 {
		t.Fatal(e)
	}
	rng := crashRand(t)
	for _, c := range []struct {
		name  string
		first []string // writes the old state
		step  []string // reads it, writes the new one in its place
	}{
		{"read", []string{"read", f.corpus, "--stream", "x:2", "--mb", "3", "--quiet", "--max-minibatches", "1000"},
			[]string{"read", f.corpus, "--stream", "x:2", "--mb", "3", "--quiet", "--max-minibatches", "8000"}},
		{"plan", []string{"plan", "--config", f.bigCfg, "--quiet", "--max-batches", "500"},
			[]string{"plan", "--config", f.bigCfg, "--quiet", "--max-batches", "3000"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := filepath.Join(f.dir, "st-"+c.name+".json")
			timed(t, f.dir, append(c.first, "--state-out", st)...)
			old, _ := os.ReadFile(st)
			step := append(c.step, "--state-in", st, "--state-out", st)
			dur := timed(t, f.dir, step...)
			newer, _ := os.ReadFile(st)
			os.WriteFile(st, old, 0o644)
			code, refOut, _ := runChild(t, f.dir, append(c.step, "--state-in", st)...)
			if code != 0 {
				t.Fatal("reference run failed")
			}
			killed, runs := 0, crashRuns(t)
			outcomes := map[string]int{}
			defer func() {
				t.Logf("%d runs killed before the end (wanted %d); state file after the kill: %v", killed, runs, outcomes)
			}()
			for attempt := 0; killed < runs && attempt < 4*runs; attempt++ {
				if err := os.WriteFile(st, old, 0o644); err != nil {
					t.Fatal(err)
				}
				d := time.Duration(rng.Int64N(int64(dur) + 1))
				if killAt(t, f.dir, d, step...) {
					killed++
				}
				got, err := os.ReadFile(st)
				if err != nil {
					t.Fatalf("kill at %v: the state file vanished: %v", d, err)
				}
				switch {
				case bytes.Equal(got, old):
					outcomes["old state"]++
				case bytes.Equal(got, newer):
					outcomes["new state"]++
				}
				switch {
				case bytes.Equal(got, old):
					// Repeat the step: same output, same new state.
					code, out, errOut := runChild(t, f.dir, step...)
					if code != 0 || out != refOut {
						t.Errorf("kill at %v: the repeated run differs from the uninterrupted one (exit %d, %s)", d, code, errOut)
					}
					if again, _ := os.ReadFile(st); !bytes.Equal(again, newer) {
						t.Errorf("kill at %v: the repeated run wrote another state", d)
					}
				case bytes.Equal(got, newer):
				default:
					t.Errorf("kill at %v: the state file is neither the old nor the new one: %q", d, got)
				}
				if m, _ := filepath.Glob(filepath.Join(f.dir, ".st-*")); len(m) > 0 && bytes.Equal(got, old) {
					t.Errorf("kill at %v: temporaries left after a successful write: %v", d, m)
				}
			}
		})
	}
}
