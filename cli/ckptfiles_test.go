package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/graph/train"
)

// train removes only files a run of its directory wrote: a table file of
// a version its log never names is reported and kept; the temporary of
// the next checkpoint (a kill's) and a superseded file the log names are
// removed.
func TestTrainLeavesForeignFiles(t *testing.T) {
	dir, cfg := trainFixture(t)
	if code, _, e := run(t, "train", "--config", cfg, "--quiet", "--set", "num_epochs=1"); code != 0 {
		t.Fatal(e)
	}
	ck := filepath.Join(dir, "ckpt")
	man, err := train.ReadManifest(ck)
	if err != nil || man == nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(ck, "emb_0_0.v999.bin")
	temp := filepath.Join(ck, fmt.Sprintf(".emb_0_1.v%d.bin.tmp-123", man.Seq+1))
	superseded := filepath.Join(ck, fmt.Sprintf("model.v%d.bin", man.Seq-1)) // named by the previous checkpoint
	for _, f := range []string{foreign, temp, superseded} {
		os.WriteFile(f, []byte("x"), 0o644)
	}
	code, _, errOut := run(t, "train", "--config", cfg, "--quiet", "--set", "num_epochs=2")
	if code != 0 {
		t.Fatal(errOut)
	}
	if _, err := os.Stat(foreign); err != nil {
		t.Errorf("a file no run of the directory wrote was removed: %v", err)
	}
	if !strings.Contains(errOut, foreign+": not part of the checkpoint and not written by a run of this directory") {
		t.Errorf("the foreign file is not reported:\n%s", errOut)
	}
	for _, f := range []string{temp, superseded} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s: left, want removed", f)
		}
	}
}

// A rank that cannot join its run (etcd unreachable) leaves nothing
// behind: not the checkpoint directory it would have made, nor a log.
func TestFailedJoinLeavesNothing(t *testing.T) {
	dir, cfg := trainFixture(t)
	ck := filepath.Join(dir, "fresh")
	code, _, errOut := run(t, "train", "--config", cfg, "--quiet", "--etcd", "127.0.0.1:1", "--world", "1", "--etcd-timeout", "500ms", "--set", "checkpoint_path="+ck)
	if code != 1 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if ents, err := os.ReadDir(ck); err == nil {
		t.Errorf("the failed join left %s with %d entries", ck, len(ents))
	}
}

// A killed rank's temporaries are removed by the next process of that
// rank; a table file of a claim no log line names is reported and kept.
func TestDistributedRemovesOwnTemporaries(t *testing.T) {
	srv := startEtcd(t)
	dir, cfg := distTrainFixture(t, 2)
	runRanks(t, dir, cfg, srv.Endpoint(), 2)
	ck := filepath.Join(dir, "ckpt")
	// A claim of rank 1 if it made one (on a loaded machine rank 0 may
	// train every bucket before rank 1 joins), else of rank 0: both ranks
	// run again below.
	var claim int64
	for _, l := range readTrainLog(t, filepath.Join(ck, train.LogName)) {
		if l.Kind == "claim" && (l.Rank == 1 || claim == 0) {
			claim = l.Claim
		}
	}
	if claim == 0 {
		t.Fatal("no rank claimed a bucket")
	}
	temp := filepath.Join(ck, fmt.Sprintf(".emb_0_0.v%d.bin.tmp-42", claim))
	foreign := filepath.Join(ck, "emb_0_0.v987654321.bin")
	os.WriteFile(temp, []byte("x"), 0o644)
	os.WriteFile(foreign, []byte("x"), 0o644)
	outs := runRanks(t, dir, cfg, srv.Endpoint(), 2, "--set", "num_epochs=3")
	if _, err := os.Stat(temp); err == nil {
		t.Errorf("the killed rank's temporary %s was left", temp)
	}
	if _, err := os.Stat(foreign); err != nil {
		t.Errorf("a file no run of the directory wrote was removed: %v", err)
	}
	if !strings.Contains(outs[0]+outs[1], foreign+": not part of the checkpoint") {
		t.Errorf("the foreign file is not reported:\n%s\n%s", outs[0], outs[1])
	}
}
