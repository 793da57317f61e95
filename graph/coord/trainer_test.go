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
// claims made ahead in commits or not, some trainers crashing (lease not revoked) and being replaced by a new
// process of the same rank, all trainers in this process on one real
// etcd. Checked from the trainers' logs (sched invariants 1-3 through
// etcd; coord invariants 1-3).
func TestRandomSchedules(t *testing.T) {
	srv := startServer(t)
	n := schedules(t)
	aheadShared := 0 // claims made ahead with several trainers
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
		s.NoClaimAhead = r.IntN(3) == 0
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
			evs := readLogs(t, dir)
			checkLogs(t, s, evs)
			checkRemoved(t, s.Endpoint, s.Run)
			for _, e := range evs {
				if e.Kind == "claim" && e.Ahead {
					if s.NoClaimAhead {
						t.Fatalf("claim %d made ahead with NoClaimAhead", e.Claim)
					}
					if s.World > 1 {
						aheadShared++
					}
				}
			}
		})
	}
	t.Logf("%d claims made ahead with several trainers", aheadShared)
	if n >= 6 && aheadShared == 0 {
		t.Fatal("no schedule with several trainers claimed a bucket ahead: the path is untested")
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
// Checked from the processes' logs. The first schedule is fixed, the
// others have random grids, ranks and kill and pause points: 2 schedules
// by default, N with BATCHPREP_COORD_PROCS=N.
func TestKilledAndPausedProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	n := 2
	if v := os.Getenv("BATCHPREP_COORD_PROCS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("BATCHPREP_COORD_PROCS=%q: want a positive integer", v)
		}
	}
	srv := startServer(t)
	for i := 0; i < n; i++ {
		r := rand.New(rand.NewPCG(uint64(i), 77))
		s := trainerSpec{Endpoint: srv.Endpoint(), Run: fmt.Sprintf("killed-%d", i), World: 4, L: 4, R: 4, Passes: 2,
			Order: bucket.InsideOut, Seed: 5, TTLms: 1000, MaxDelay: 20, Steps: 4}
		kill, killAfter, pause, pauseAfter, pauseFor := 1, 0, 2, 0, 2500*time.Millisecond
		if i > 0 {
			s.World, s.L, s.Passes, s.Order, s.Seed = 2+r.IntN(4), 2+r.IntN(4), 1+r.IntN(2), bucket.Names[r.IntN(4)], uint64(i)
			s.R = s.L
			kill, killAfter = r.IntN(s.World), r.IntN(2)
			pause, pauseAfter = (kill+1+r.IntN(s.World-1))%s.World, r.IntN(2)
			pauseFor = time.Duration(1500+r.IntN(1500)) * time.Millisecond
		}
		t.Run(specString(s), func(t *testing.T) {
			killAndPause(t, s, kill, killAfter, pause, pauseAfter, pauseFor)
		})
	}
}

func killAndPause(t *testing.T, s trainerSpec, kill, killAfter, pause, pauseAfter int, pauseFor time.Duration) {
	dir := t.TempDir()
	procs := make([]*exec.Cmd, s.World)
	spec := func(rank int) trainerSpec {
		sp := s
		sp.Rank, sp.Log = rank, filepath.Join(dir, fmt.Sprintf("rank%d.log", rank))
		return sp
	}
	for rank := range procs {
		procs[rank] = startChild(t, spec(rank))
	}
	// Kill a rank once it has made killAfter+1 claims, then restart it.
	if waitForClaim(t, dir, kill, killAfter) {
		procs[kill].Process.Signal(syscall.SIGKILL)
		procs[kill].Wait()
		procs[kill] = startChild(t, spec(kill))
	}
	// Pause another inside a claim for longer than its lease.
	if waitForClaim(t, dir, pause, pauseAfter) {
		procs[pause].Process.Signal(syscall.SIGSTOP)
		time.Sleep(pauseFor)
		procs[pause].Process.Signal(syscall.SIGCONT)
	}
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
		if e.Kind == "lost" && e.Rank == pause {
			lost++
		}
	}
	t.Logf("%d events; rank %d killed, rank %d lost %d claims while paused", len(evs), kill, pause, lost)
}

// waitForClaim waits until rank's log shows more than n claims; false if
// the rank ended first (a small run can be over before it claims again).
func waitForClaim(t *testing.T, dir string, rank, n int) bool {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		c := 0
		for _, e := range readLogs(t, dir) {
			if e.Rank == rank && e.Kind == "claim" {
				c++
			}
			if e.Rank == rank && e.Kind == "end" {
				return false
			}
		}
		if c > n {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("rank %d made no claim in 30 s", rank)
	return false
}

// TestCommitFencedByClaim (invariants 1 and 2): a trainer whose lease
// expired while it held a bucket cannot commit it, even if it never
// checks Valid; the bucket is given again and committed once.
func TestCommitFencedByClaim(t *testing.T) {
	srv := startServer(t)
	ctx := context.Background()
	join := func(rank int) *Trainer {
		return joinTest(t, srv, Options{Run: "fence", Rank: rank, World: 2, L: 1, R: 1, Passes: 1, LeaseTTL: time.Second})
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
