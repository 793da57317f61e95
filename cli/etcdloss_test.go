package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batchprep/batchprep/graph/coord"
)

// startRanks starts `train --etcd` ranks 0..w-1 as child processes.
func startRanks(t *testing.T, dir, cfg, endpoint string, w int, extra ...string) ([]*exec.Cmd, []*lockedBuffer) {
	t.Helper()
	cmds := make([]*exec.Cmd, w)
	outs := make([]*lockedBuffer, w)
	for r := range w {
		cmds[r] = child(t, dir, append(distArgs(cfg, endpoint, r, w), extra...)...)
		outs[r] = &lockedBuffer{}
		cmds[r].Stdout, cmds[r].Stderr = outs[r], outs[r]
		if err := cmds[r].Start(); err != nil {
			t.Fatal(err)
		}
		c := cmds[r]
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	}
	return cmds, outs
}

// waitCommits waits until the training log at path has n commit lines.
func waitCommits(t *testing.T, path string, n int) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		c := 0
		for _, l := range readLogIfAny(t, path) {
			if l.Kind == "commit" {
				c++
			}
		}
		if c >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("fewer than %d commits in a minute", n)
		}
	}
}

// etcd (in this process) stopped under two training ranks: for 3 s,
// then for longer than --etcd-timeout. A short outage: a rank that
// notices it says that etcd does not answer, and that it answers again
// (at least one rank notices), and the run goes on. A long one: each rank exits 1 within the timeout (plus the time to
// give up its work) with "etcd at ADDR unreachable for 10.x s; restart it
// and rerun the same command", never a raw gRPC error and never a rank
// left waiting. etcd restarted on its data, the same commands finish the
// run with every bucket of every pass committed once. (Before: one rank
// exited at once with "rpc error: code = Unavailable", the other waited
// for ever.)
func TestTrainDistributedEtcdLost(t *testing.T) {
	dir, cfg := distTrainFixture(t, 200)
	etcdDir := filepath.Join(dir, "etcd")
	srv, err := coord.Serve(coord.ServerOptions{Dir: etcdDir, Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	ep := srv.Endpoint()
	restart := func() {
		t.Helper()
		var err error
		if srv, err = coord.Serve(coord.ServerOptions{Dir: etcdDir, Listen: ep, Fast: true}); err != nil {
			t.Fatal(err)
		}
	}
	defer func() { srv.Close() }()
	logPath := filepath.Join(dir, "ckpt", "training_log.jsonl")
	cmds, outs := startRanks(t, dir, cfg, ep, 2, "--etcd-timeout", "10s")
	waitCommits(t, logPath, 10)

	srv.Close() // a short outage (long enough for the once-a-second probe to see)
	time.Sleep(3 * time.Second)
	restart()
	// A rank whose calls all fell outside the outage, or whose one call
	// waited it out, has nothing to say; one that noticed it must say
	// that etcd answers again, and at least one rank notices.
	recovered := func() bool {
		noticed := 0
		for _, o := range outs {
			s := o.String()
			if strings.Contains(s, "does not answer") {
				if !strings.Contains(s, "answers again") {
					return false
				}
				noticed++
			}
		}
		return noticed > 0
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if recovered() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a short outage, 30 s after etcd came back:\n%s\n%s", outs[0], outs[1])
		}
	}
	n := 0
	for _, l := range readLogIfAny(t, logPath) {
		if l.Kind == "commit" {
			n++
		}
	}
	waitCommits(t, logPath, n+10)
	for r, out := range outs {
		if s := out.String(); strings.Contains(s, "does not answer") && !strings.Contains(s, "does not answer; retrying for up to 10 s") {
			t.Errorf("rank %d after a short outage:\n%s", r, s)
		}
	}

	srv.Close() // longer than --etcd-timeout
	stopped := time.Now()
	// Each rank exits within the timeout plus 5 s of etcd's end, saying
	// for how long etcd was silent: at least the timeout, counted from the
	// start of the first request left unanswered, which may have begun up
	// to a probe's interval (1 s) before etcd stopped.
	// (Before: a rank noticed the outage only when a probe of up to 5 s
	// had failed, and checked the timeout only between probes: 17-20 s
	// here, 25-61 s with a timeout of 20 s.)
	said := regexp.MustCompile(`etcd at ` + regexp.QuoteMeta(ep) + ` unreachable for ([0-9.]+) s; restart it and rerun the same command`)
	for r, c := range cmds {
		err := waitOrKill(c, stopped.Add(30*time.Second))
		took := time.Since(stopped)
		t.Logf("rank %d exited %v after etcd stopped", r, took)
		if took > 10*time.Second+5*time.Second {
			t.Errorf("rank %d exited %v after etcd stopped, want within the timeout (10 s) + 5 s", r, took)
		}
		s := outs[r].String()
		m := said.FindStringSubmatch(s)
		if code := c.ProcessState.ExitCode(); code != 1 || m == nil || strings.Contains(s, "rpc error") {
			t.Errorf("rank %d: %v (exit %d)\n%s", r, err, code, s)
		} else if f, _ := strconv.ParseFloat(m[1], 64); f < 10 || f > took.Seconds()+1.5 || took < 8500*time.Millisecond {
			t.Errorf("rank %d says etcd was silent for %s s; it exited %v after etcd stopped, with a timeout of 10 s", r, m[1], took)
		}
	}

	restart()
	runRanks(t, dir, cfg, ep, 2)
	checkOncePerPass(t, readTrainLog(t, logPath), 200, 2, 2)
	if code, out, errOut := run(t, "verify", "--config", cfg); code != 0 {
		t.Errorf("verify after the run: exit %d\n%s%s", code, out, errOut)
	}
}

// waitOrKill waits for c until deadline, then kills it.
func waitOrKill(c *exec.Cmd, deadline time.Time) error {
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Until(deadline)):
		c.Process.Kill()
		<-done
		return fmt.Errorf("still running %v after etcd stopped: killed", time.Until(deadline)+30*time.Second)
	}
}

// plan --etcd ranks whose etcd (in this process) stops for good: each
// says etcd does not answer and exits 1 within --etcd-timeout with the
// same message as train's. (Before: ranks were seen waiting ten minutes
// after their coordinator was gone.)
func TestPlanDistributedEtcdLost(t *testing.T) {
	srv, err := coord.Serve(coord.ServerOptions{Dir: filepath.Join(t.TempDir(), "etcd"), Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	cfg := distFixture(t, "inside_out")
	data, _ := os.ReadFile(cfg)
	os.WriteFile(cfg, []byte(strings.Replace(string(data), "num_epochs = 2", "num_epochs = 100000", 1)), 0o644)
	const w = 2
	type result struct {
		code   int
		stderr string
		at     time.Time
	}
	res := make(chan result, w)
	var printed [w]countWriter
	for r := range w {
		go func() {
			var e bytes.Buffer
			code := Main([]string{"plan", "--config", cfg, "--etcd", srv.Endpoint(), "--rank", fmt.Sprint(r), "--world", fmt.Sprint(w),
				"--format", "jsonl", "--lease-ttl", "1s", "--etcd-timeout", "2s"}, strings.NewReader(""), &printed[r], &e)
			res <- result{code, e.String(), time.Now()}
		}()
	}
	for deadline := time.Now().Add(time.Minute); printed[0].n.Load() == 0 || printed[1].n.Load() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the ranks printed nothing in a minute")
		}
	}
	srv.Close()
	stopped := time.Now()
	for range w {
		select {
		case r := <-res:
			if took := r.at.Sub(stopped); r.code != 1 || took > 10*time.Second ||
				!strings.Contains(r.stderr, "etcd at "+srv.Endpoint()+" unreachable for 2 s; restart it and rerun the same command") {
				t.Errorf("exit %d after %v:\n%s", r.code, took, r.stderr)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("a plan rank still runs 30 s after etcd stopped")
		}
	}
}

// countWriter counts the bytes written to it, from any goroutine.
type countWriter struct{ n atomic.Int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n.Add(int64(len(p))); return len(p), nil }
