package cli

import (
	"os"

	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/graph/train"
)

// runRanks runs `train --etcd` as ranks 0..w-1 in child processes, with
// extra arguments, and waits for them all.
func runRanks(t *testing.T, dir, cfg, endpoint string, w int, extra ...string) []string {
	t.Helper()
	cmds := make([]*exec.Cmd, w)
	outs := make([]*bytes.Buffer, w)
	for r := range w {
		cmds[r] = child(t, dir, append(distArgs(cfg, endpoint, r, w), extra...)...)
		outs[r] = &bytes.Buffer{}
		cmds[r].Stdout, cmds[r].Stderr = outs[r], outs[r]
		if err := cmds[r].Start(); err != nil {
			t.Fatal(err)
		}
	}
	res := make([]string, w)
	for r, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("rank %d: %v\n%s", r, err, outs[r])
		}
		res[r] = outs[r].String()
	}
	return res
}

// A finished distributed run's checkpoint is healthy: verify accepts it
// and its log (claim, commit and lost lines of several ranks); a
// single-process train continues it with more epochs, appending its lines
// to the same log, and verify accepts the result.
func TestVerifyAndContinueDistributed(t *testing.T) {
	srv := startEtcd(t)
	dir, cfg := distTrainFixture(t, 3)
	runRanks(t, dir, cfg, srv.Endpoint(), 2)
	if code, out, errOut := run(t, "verify", "--config", cfg); code != 0 || !strings.Contains(out, "checkpoint sound") {
		t.Fatalf("verify of a finished distributed run: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut := run(t, "train", "--config", cfg, "--quiet", "--set", "num_epochs=5")
	if code != 0 || !strings.Contains(out, "trained 20 buckets") {
		t.Fatalf("single-process train continuing the distributed run: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := run(t, "verify", "--config", cfg); code != 0 {
		t.Fatalf("verify after continuing: exit %d\n%s%s", code, out, errOut)
	}
	man, err := train.ReadManifest(filepath.Join(dir, "ckpt"))
	if err != nil || man == nil || !man.Done || man.Buckets != 20 || man.Distributed != nil {
		t.Errorf("manifest after continuing: %+v, %v", man, err)
	}
}

// A distributed run's etcd state met by a directory that is not the run's:
// the run (world 2, finished by rank 0 alone, so its keys stay in etcd) is
// refused by a rank whose checkpoint_path differs, and, once its directory
// is deleted, by the same command (before: exit 0, "trained 0 buckets; the
// run trained 12", and a manifest naming missing files). Ranks given a
// different config are refused naming the key. coordinator runs lists the
// run, describes it, deletes it; then the same commands start it over.
func TestDistributedRunMeetsOldState(t *testing.T) {
	srv := startEtcd(t)
	dir, cfg := distTrainFixture(t, 3)
	ck := filepath.Join(dir, "ckpt")
	runRanks(t, dir, cfg, srv.Endpoint(), 1, "--world", "2") // rank 0 of 2 trains every bucket alone
	rank1 := func(extra ...string) (int, string) {
		code, out, errOut := run(t, append(distArgs(cfg, srv.Endpoint(), 1, 2), extra...)...)
		return code, out + errOut
	}
	other := filepath.Join(dir, "elsewhere")
	if code, out := rank1("--set", "checkpoint_path="+other); code != 1 || !strings.Contains(out, "started with checkpoint_path "+ck) || strings.Contains(out, "trained") {
		t.Errorf("a rank with another checkpoint_path: exit %d\n%s", code, out)
	}
	if code, out := rank1("--set", "lr=0.2"); code != 1 || !strings.Contains(out, "lr:") || !strings.Contains(out, "still in progress") {
		t.Errorf("a rank with another config: exit %d\n%s", code, out)
	}
	code, out, _ := run(t, "coordinator", "runs", "--etcd", srv.Endpoint())
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 {
		t.Fatalf("coordinator runs: exit %d\n%s", code, out)
	}
	fields := strings.Fields(lines[1])
	if !strings.HasPrefix(fields[0], "train-") || strings.Join(fields[1:], " ") != "2 12 3 none rank 0" {
		t.Fatalf("coordinator runs: exit %d\n%s", code, out)
	}
	name := fields[0]
	if code, out, _ := run(t, "coordinator", "runs", "--etcd", srv.Endpoint(), "--describe", name); code != 0 || !strings.Contains(out, "checkpoint_path "+ck) {
		t.Errorf("coordinator runs --describe: exit %d\n%s", code, out)
	}
	if err := os.RemoveAll(ck); err != nil {
		t.Fatal(err)
	}
	if code, out := rank1(); code != 1 || !strings.Contains(out, "deleted or replaced") || !strings.Contains(out, "coordinator runs --etcd "+srv.Endpoint()+" --delete") {
		t.Errorf("the same command after the directory was deleted: exit %d\n%s", code, out)
	}
	if code, out, errOut := run(t, "coordinator", "runs", "--etcd", srv.Endpoint(), "--delete", name); code != 0 || !strings.Contains(out, "deleted run "+name) {
		t.Fatalf("coordinator runs --delete: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, _ := run(t, "coordinator", "runs", "--etcd", srv.Endpoint()); code != 0 || !strings.Contains(out, "no runs") {
		t.Errorf("coordinator runs after the delete: exit %d\n%s", code, out)
	}
	runRanks(t, dir, cfg, srv.Endpoint(), 2)
	if code, out, errOut := run(t, "verify", "--config", cfg); code != 0 {
		t.Errorf("verify of the run started over: exit %d\n%s%s", code, out, errOut)
	}
}
