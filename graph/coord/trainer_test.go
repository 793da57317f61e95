package coord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/batchprep/batchprep/graph/bucket"
)

// TestMain runs the test binary as a trainer when BATCHPREP_COORD_TRAINER
// holds a spec: the property tests start real child processes this way and
// kill them with SIGKILL or pause them with SIGSTOP.
func TestMain(m *testing.M) {
	if js := os.Getenv("BATCHPREP_COORD_TRAINER"); js != "" {
		var s trainerSpec
		if err := json.Unmarshal([]byte(js), &s); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		if _, err := runTrainer(context.Background(), s, os.Getpid()); err != nil {
			fmt.Fprintln(os.Stderr, "trainer:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// schedules is how many random schedules TestRandomSchedules runs:
// BATCHPREP_COORD_SCHEDULES, default 12 (a few seconds).
func schedules(t *testing.T) int {
	if v := os.Getenv("BATCHPREP_COORD_SCHEDULES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("BATCHPREP_COORD_SCHEDULES=%q: want a positive integer", v)
		}
		return n
	}
	if testing.Short() {
		return 3
	}
	return 12
}

// TestRandomSchedules: random grids, orders, trainer counts and delays,
// some trainers crashing (lease not revoked) and being replaced by a new
// process of the same rank, all trainers in this process on one real
// etcd. Checked from the trainers' logs (sched invariants 1-3 through
// etcd; coord invariants 1-3).
func TestRandomSchedules(t *testing.T) {
	srv := startServer(t)
	n := schedules(t)
	for i := 0; i < n; i++ {
		r := rand.New(rand.NewPCG(uint64(i), 99))
		s := trainerSpec{Endpoint: srv.Endpoint(), Run: fmt.Sprintf("random-%d", i), World: 1 + r.IntN(6),
			L: 1 + r.IntN(5), Passes: 1 + r.IntN(3), Order: bucket.Names[r.IntN(4)], Seed: uint64(i),
			TTLms: 1000, MaxDelay: r.IntN(4), Steps: 1 + r.IntN(3)}
		s.R = s.L
		if r.IntN(3) == 0 {
			s.R = 1 + r.IntN(5)
		}
		crash := r.IntN(3) == 0
		t.Run(specString(s), func(t *testing.T) {
			dir := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			var wg sync.WaitGroup
			errs := make(chan error, 2*s.World)
			for rank := 0; rank < s.World; rank++ {
				wg.Go(func() {
					sp := s
					sp.Rank, sp.Log = rank, filepath.Join(dir, fmt.Sprintf("rank%d.log", rank))
					if crash && rank == 0 {
						// The first incarnation dies holding its second
						// bucket; a new one joins the running run.
						sp.DieAfter = 2
						died, err := runTrainer(ctx, sp, 1000+rank)
						if err != nil || !died {
							errs <- err
							return
						}
						sp.DieAfter = 0
					}
					if _, err := runTrainer(ctx, sp, rank); err != nil {
						errs <- fmt.Errorf("rank %d: %w", rank, err)
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			checkLogs(t, s, readLogs(t, dir))
			checkRemoved(t, s.Endpoint, s.Run)
		})
	}
}

// startChild runs the test binary as a trainer process.
func startChild(t *testing.T, s trainerSpec) *exec.Cmd {
	t.Helper()
	js, _ := json.Marshal(s)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "BATCHPREP_COORD_TRAINER="+string(js))
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// TestKilledAndPausedProcesses: W trainer processes; one is killed with
// SIGKILL while it works and restarted (it rejoins the running run), one
// is paused with SIGSTOP for longer than its lease and resumed (its claim
// is lost, its work not counted, and it carries on with a new lease).
// Checked from the processes' logs.
func TestKilledAndPausedProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	srv := startServer(t)
	dir := t.TempDir()
	s := trainerSpec{Endpoint: srv.Endpoint(), Run: "killed", World: 4, L: 4, R: 4, Passes: 2, Order: bucket.InsideOut,
		Seed: 5, TTLms: 1000, MaxDelay: 20, Steps: 4}
	procs := make([]*exec.Cmd, s.World)
	spec := func(rank int) trainerSpec {
		sp := s
		sp.Rank, sp.Log = rank, filepath.Join(dir, fmt.Sprintf("rank%d.log", rank))
		return sp
	}
	for rank := range procs {
		procs[rank] = startChild(t, spec(rank))
	}
	// Kill rank 1 as soon as it has claimed something, then restart it.
	waitForClaim(t, dir, 1, 0)
	procs[1].Process.Signal(syscall.SIGKILL)
	procs[1].Wait()
	procs[1] = startChild(t, spec(1))
	// Pause rank 2 inside a claim for 2.5 lease TTLs.
	waitForClaim(t, dir, 2, 0)
	procs[2].Process.Signal(syscall.SIGSTOP)
	time.Sleep(2500 * time.Millisecond)
	procs[2].Process.Signal(syscall.SIGCONT)
	done := make(chan error, len(procs))
	for _, p := range procs {
		go func() { done <- p.Wait() }()
	}
	timeout := time.After(60 * time.Second)
	for range procs {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("trainer process: %v", err)
			}
		case <-timeout:
			for _, p := range procs {
				p.Process.Kill()
			}
			t.Fatal("run stuck: trainers not done after 60 s")
		}
	}
	evs := readLogs(t, dir)
	checkLogs(t, s, evs)
	checkRemoved(t, s.Endpoint, s.Run)
	lost := 0
	for _, e := range evs {
		if e.Kind == "lost" && e.Rank == 2 {
			lost++
		}
	}
	t.Logf("%d events; rank 2 lost %d claims while paused", len(evs), lost)
}

// waitForClaim waits until rank's log shows more than n claims.
func waitForClaim(t *testing.T, dir string, rank, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		c := 0
		for _, e := range readLogs(t, dir) {
			if e.Rank == rank && e.Kind == "claim" {
				c++
			}
		}
		if c > n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("rank %d made no claim in 30 s", rank)
}

// TestCommitFencedByClaim (invariants 1 and 2): a trainer whose lease
// expired while it held a bucket cannot commit it, even if it never
// checks Valid; the bucket is given again and committed once.
func TestCommitFencedByClaim(t *testing.T) {
	srv := startServer(t)
	ctx := context.Background()
	join := func(rank int) *Trainer {
		c, err := newClient(srv.Endpoint())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		tr, err := Join(ctx, c, Options{Run: "fence", Rank: rank, World: 2, L: 1, R: 1, Passes: 1, LeaseTTL: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	a, b := join(0), join(1)
	ca, err := a.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a.lease.halt()         // a stops sending keep-alives, as if paused
	cb, err := b.Next(ctx) // waits until a's lease expires
	if err != nil {
		t.Fatal(err)
	}
	if cb.Bucket != ca.Bucket || cb.Number <= ca.Number {
		t.Fatalf("b got %+v after a's %+v", cb, ca)
	}
	if a.Valid() {
		t.Fatal("a's lease reported valid after it expired")
	}
	if err := a.Commit(ctx, ca); !errors.Is(err, ErrLost) {
		t.Fatalf("a's commit after its lease expired: %v, want ErrLost", err)
	}
	if err := b.Commit(ctx, cb); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Next(ctx); !errors.Is(err, ErrDone) {
		t.Fatalf("b: %v, want ErrDone", err)
	}
}
