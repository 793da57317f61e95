package cli

import (
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
