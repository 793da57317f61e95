package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/batchprep/batchprep/graph/coord"
	"github.com/batchprep/batchprep/graph/train"
)

// trainLogLine is a line of a distributed run's training log.
type trainLogLine struct {
	Kind   string `json:"kind"`
	Rank   int    `json:"rank"`
	Pass   int    `json:"pass"`
	Claim  int64  `json:"claim"`
	Bucket struct {
		Lhs int `json:"lhs"`
		Rhs int `json:"rhs"`
	} `json:"bucket"`
	Edges int `json:"edges"`
}

func readTrainLog(t *testing.T, path string) []trainLogLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []trainLogLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l trainLogLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%s: %q: %v", path, sc.Text(), err)
		}
		out = append(out, l)
	}
	return out
}

// checkOncePerPass checks, from the trainers' log (not from etcd), that
// every bucket of every pass counted exactly once. A claim with neither a
// commit nor a lost line belongs to a killed trainer: it counts if and
// only if no other claim of that bucket and pass committed (the trainer
// died after its commit and before writing the line; otherwise the bucket
// went back to the pool and was trained again).
func checkOncePerPass(t *testing.T, lines []trainLogLine, passes, l, r int) map[int]int {
	t.Helper()
	type key struct{ pass, lhs, rhs int }
	claims := map[int64]trainLogLine{}
	ended := map[int64]string{}
	commits := map[key]int{}
	perRank := map[int]int{}
	for _, ln := range lines {
		switch ln.Kind {
		case "claim":
			if _, dup := claims[ln.Claim]; dup {
				t.Errorf("claim %d logged twice", ln.Claim)
			}
			claims[ln.Claim] = ln
		case "commit", "lost":
			if c, ok := claims[ln.Claim]; !ok || c.Rank != ln.Rank {
				t.Errorf("%s of claim %d (rank %d) without its claim line", ln.Kind, ln.Claim, ln.Rank)
			}
			ended[ln.Claim] = ln.Kind
			if ln.Kind == "commit" {
				commits[key{ln.Pass, ln.Bucket.Lhs, ln.Bucket.Rhs}]++
				perRank[ln.Rank]++
			}
		}
	}
	for c, ln := range claims {
		k := key{ln.Pass, ln.Bucket.Lhs, ln.Bucket.Rhs}
		if ended[c] == "" && commits[k] == 0 {
			commits[k]++ // committed just before the kill
		}
	}
	for p := range passes {
		for i := range l {
			for j := range r {
				if n := commits[key{p, i, j}]; n != 1 {
					t.Errorf("pass %d bucket (%d,%d) counted %d times", p, i, j, n)
				}
			}
		}
	}
	if len(commits) != passes*l*r {
		t.Errorf("%d (pass, bucket) pairs committed, want %d", len(commits), passes*l*r)
	}
	return perRank
}

func startEtcd(t *testing.T) *coord.Server {
	t.Helper()
	srv, err := coord.Serve(coord.ServerOptions{Dir: filepath.Join(t.TempDir(), "etcd"), Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

// evalMRR ranks the fixture's test edges with cfg's checkpoint.
func evalMRR(t *testing.T, dir, cfg string, sets ...string) float64 {
	t.Helper()
	args := []string{"eval", "--config", cfg, "--edges", filepath.Join(dir, "test.txt"), "--rel-col", "1", "--filter", filepath.Join(dir, "train.txt"),
		"--filter", filepath.Join(dir, "valid.txt"), "--format", "json"}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	code, out, errOut := run(t, args...)
	if code != 0 {
		t.Fatalf("eval: %s", errOut)
	}
	var rep struct{ MRR float64 }
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	return rep.MRR
}

func distArgs(cfg, endpoint string, rank, world int) []string {
	return []string{"train", "--config", cfg, "--etcd", endpoint, "--rank", strconv.Itoa(rank), "--world", strconv.Itoa(world),
		"--lease-ttl", "1s", "--quiet"}
}

// distTrainFixture is trainFixture's Nations (2 partitions) trained for
// the given epochs at dimension 16 with one worker and no holdout.
func distTrainFixture(t *testing.T, epochs int) (dir, cfg string) {
	t.Helper()
	dir, cfg = trainFixture(t)
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	for _, r := range [][2]string{{"dimension = 8", "dimension = 16"}, {"num_epochs = 3", fmt.Sprintf("num_epochs = %d", epochs)},
		{"eval_fraction = 0.1", "eval_fraction = 0\nlr = 0.1"}, {"workers = 2", "workers = 1"}} {
		if !strings.Contains(s, r[0]) {
			t.Fatalf("fixture config lacks %q", r[0])
		}
		s = strings.Replace(s, r[0], r[1], 1)
	}
	cfg = filepath.Join(dir, "dist.toml")
	if err := os.WriteFile(cfg, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, cfg
}

// Two trainer processes (the test binary re-executed as batchprep) train
// Nations with 2x2 buckets through a real etcd: from their log, every
// bucket of every pass is trained exactly once and both ranks trained; the
// manifest is finished and names every partition; eval and export read
// it; and the embeddings rank the test edges as well as one process does.
func TestTrainDistributed(t *testing.T) {
	srv := startEtcd(t)
	dir, cfg := distTrainFixture(t, 12)
	single := filepath.Join(dir, "single")
	if code, _, errOut := run(t, "train", "--config", cfg, "--quiet", "--set", "checkpoint_path="+single); code != 0 {
		t.Fatalf("single-process train: %s", errOut)
	}
	const w = 2
	cmds := make([]*exec.Cmd, w)
	outs := make([]*bytes.Buffer, w)
	for r := range w {
		cmds[r] = child(t, dir, distArgs(cfg, srv.Endpoint(), r, w)...)
		outs[r] = &bytes.Buffer{}
		cmds[r].Stdout, cmds[r].Stderr = outs[r], outs[r]
		if err := cmds[r].Start(); err != nil {
			t.Fatal(err)
		}
	}
	for r, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("rank %d: %v\n%s", r, err, outs[r])
		}
	}
	ck := filepath.Join(dir, "ckpt")
	perRank := checkOncePerPass(t, readTrainLog(t, filepath.Join(ck, "training_log.jsonl")), 12, 2, 2)
	if perRank[0] == 0 || perRank[1] == 0 {
		t.Errorf("buckets per rank %v: both ranks should train", perRank)
	}
	man, err := train.ReadManifest(ck)
	if err != nil || man == nil {
		t.Fatalf("manifest: %v", err)
	}
	if !man.Done || man.Buckets != 48 || len(man.Tables) != 2 || len(man.History) != 12 {
		t.Errorf("manifest: done %v, %d buckets, %d tables, %d epochs", man.Done, man.Buckets, len(man.Tables), len(man.History))
	}
	if code, _, errOut := run(t, "export", "--config", cfg, "--out", filepath.Join(dir, "emb.tsv")); code != 0 {
		t.Errorf("export: %s", errOut)
	}
	one, dist := evalMRR(t, dir, cfg, "checkpoint_path="+single), evalMRR(t, dir, cfg)
	t.Logf("test MRR: one process %.4f, two %.4f", one, dist)
	if d := dist - one; d < -mrrTolerance || d > mrrTolerance {
		t.Errorf("test MRR: one process %.4f, two %.4f: differ by more than %.2f", one, dist, mrrTolerance)
	}
}

// mrrTolerance bounds the difference of test MRR between one process and
// a distributed run of the same config on Nations (see TestTrainDistributed).
const mrrTolerance = 0.05

// A trainer process killed with SIGKILL while it holds a bucket: the other
// rank goes on and finishes the epoch (the bucket returns to the pool when
// the dead rank's lease expires and is trained again, from the log: once
// per pass in all), and the same command started again rejoins the
// running run and trains buckets in it.
func TestTrainDistributedKill(t *testing.T) {
	srv := startEtcd(t)
	dir, cfg := distTrainFixture(t, 30)
	logPath := filepath.Join(dir, "ckpt", "training_log.jsonl")
	start := func(r int) (*exec.Cmd, *bytes.Buffer) {
		c := child(t, dir, distArgs(cfg, srv.Endpoint(), r, 2)...)
		var out bytes.Buffer
		c.Stdout, c.Stderr = &out, &out
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		return c, &out
	}
	r0, out0 := start(0)
	r1, out1 := start(1)
	// Kill rank 1 while it holds a claim, after it committed 3 buckets.
	var killed trainLogLine
	deadline := time.Now().Add(time.Minute)
	for {
		if time.Now().After(deadline) {
			r0.Process.Kill()
			r1.Process.Kill()
			t.Fatalf("rank 1 never held a bucket after 3 commits\n%s\n%s", out0, out1)
		}
		time.Sleep(time.Millisecond)
		lines := readLogIfAny(t, logPath)
		commits, last := 0, trainLogLine{}
		for _, l := range lines {
			if l.Rank == 1 {
				if l.Kind == "commit" {
					commits++
				}
				last = l
			}
		}
		if commits >= 3 && last.Kind == "claim" {
			r1.Process.Signal(syscall.SIGKILL)
			r1.Wait()
			killed = last
			break
		}
	}
	// Rank 0 alone finishes the epoch, the killed bucket included once
	// rank 1's lease has expired.
	for !slices.ContainsFunc(readLogIfAny(t, logPath), func(l trainLogLine) bool { return l.Kind == "commit" && l.Pass > killed.Pass }) {
		if time.Now().After(deadline) {
			r0.Process.Kill()
			t.Fatalf("rank 0 did not finish pass %d alone\n%s", killed.Pass, out0)
		}
		time.Sleep(5 * time.Millisecond)
	}
	before := len(readTrainLog(t, logPath))
	r1, out1 = start(1)
	for r, c := range []*exec.Cmd{r0, r1} {
		if err := c.Wait(); err != nil {
			t.Fatalf("rank %d: %v\n%s\n%s", r, err, out0, out1)
		}
	}
	lines := readTrainLog(t, logPath)
	checkOncePerPass(t, lines, 30, 2, 2)
	retrained, rejoined := false, 0
	for i, l := range lines {
		if l.Kind == "commit" && l.Pass == killed.Pass && l.Bucket == killed.Bucket && l.Claim != killed.Claim {
			retrained = true
		}
		if i >= before && l.Kind == "commit" && l.Rank == 1 {
			rejoined++
		}
	}
	if !retrained {
		t.Logf("rank 1 was killed after committing claim %d (the line was not written): the bucket was not retrained", killed.Claim)
	}
	if rejoined == 0 {
		t.Errorf("the restarted rank 1 trained no bucket")
	}
	man, err := train.ReadManifest(filepath.Join(dir, "ckpt"))
	if err != nil || man == nil || !man.Done || man.Buckets != 120 {
		t.Fatalf("manifest: %+v, %v", man, err)
	}
	t.Logf("killed rank 1 holding pass %d bucket %v (claim %d); retrained: %v; the restarted rank committed %d buckets",
		killed.Pass, killed.Bucket, killed.Claim, retrained, rejoined)
}

// readLogIfAny is readTrainLog for a log that may not exist yet or end in
// a partial line (a writer is running).
func readLogIfAny(t *testing.T, path string) []trainLogLine {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []trainLogLine
	for _, line := range strings.SplitAfter(string(data), "\n") {
		var l trainLogLine
		if strings.HasSuffix(line, "\n") && json.Unmarshal([]byte(line), &l) == nil {
			out = append(out, l)
		}
	}
	return out
}

// All ranks killed with SIGKILL mid-run: a single-process train refuses
// the unfinished distributed checkpoint (its position is in etcd), the
// same commands started again continue the run to the end with every
// bucket once per pass; then the finished run continues, distributed,
// with two more epochs (a new run, started from the manifest).
func TestTrainDistributedResume(t *testing.T) {
	srv := startEtcd(t)
	dir, cfg := distTrainFixture(t, 20)
	ck := filepath.Join(dir, "ckpt")
	logPath := filepath.Join(ck, "training_log.jsonl")
	startAll := func(args func(r int) []string) []*exec.Cmd {
		cmds := make([]*exec.Cmd, 2)
		for r := range cmds {
			cmds[r] = child(t, dir, args(r)...)
			cmds[r].Stderr = &bytes.Buffer{}
			if err := cmds[r].Start(); err != nil {
				t.Fatal(err)
			}
		}
		return cmds
	}
	cmds := startAll(func(r int) []string { return distArgs(cfg, srv.Endpoint(), r, 2) })
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no 10 commits in a minute")
		}
		n := 0
		for _, l := range readLogIfAny(t, logPath) {
			if l.Kind == "commit" {
				n++
			}
		}
		if n >= 10 {
			break
		}
	}
	for _, c := range cmds {
		c.Process.Signal(syscall.SIGKILL)
		c.Wait()
	}
	if code, _, errOut := run(t, "train", "--config", cfg, "--quiet"); code == 0 || !strings.Contains(errOut, "distributed run") {
		t.Errorf("single-process train on an unfinished distributed checkpoint: code %d, %s", code, errOut)
	}
	cmds = startAll(func(r int) []string { return distArgs(cfg, srv.Endpoint(), r, 2) })
	for r, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("rank %d after the restart: %v\n%s", r, err, c.Stderr)
		}
	}
	checkOncePerPass(t, readTrainLog(t, logPath), 20, 2, 2)
	man, err := train.ReadManifest(ck)
	if err != nil || man == nil || !man.Done || man.Buckets != 80 {
		t.Fatalf("manifest after the restart: %+v, %v", man, err)
	}
	cmds = startAll(func(r int) []string { return append(distArgs(cfg, srv.Endpoint(), r, 2), "--set", "num_epochs=22") })
	for r, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("rank %d continuing: %v\n%s", r, err, c.Stderr)
		}
	}
	man, err = train.ReadManifest(ck)
	if err != nil || man == nil || !man.Done || man.Buckets != 88 || len(man.History) != 22 {
		t.Fatalf("manifest after 2 more epochs: %+v, %v", man, err)
	}
}

// Distributed flags without --etcd, or a rank outside the world, are
// usage errors (exit 2) naming the flag; an unreachable etcd is an error.
func TestTrainDistributedUsage(t *testing.T) {
	_, cfg := trainFixture(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--rank", "1"}, "go with --etcd"},
		{[]string{"--etcd", "127.0.0.1:1", "--rank", "2", "--world", "2"}, "--rank 2 --world 2"},
		{[]string{"--etcd", "127.0.0.1:1", "--world", "1", "--lease-ttl", "10ms"}, "--lease-ttl"},
	} {
		code, _, errOut := run(t, append([]string{"train", "--config", cfg}, c.args...)...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, errOut, c.want)
		}
	}
	code, _, errOut := run(t, "train", "--config", cfg, "--quiet", "--etcd", "127.0.0.1:1", "--world", "1", "--etcd-timeout", "500ms")
	if code != 1 || !strings.Contains(errOut, "etcd at 127.0.0.1:1 unreachable for 0.5 s; restart it and rerun the same command") {
		t.Errorf("unreachable etcd: exit %d, %q", code, errOut)
	}
}
