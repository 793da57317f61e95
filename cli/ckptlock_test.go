package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/batchprep/batchprep/graph/train"
)

// startLongTrain starts `train` of cfg for the given epochs in a child
// process and waits until it has committed the checkpoint of its first
// epoch (every partition trained).
func startLongTrain(t *testing.T, dir, cfg string, epochs int) (*exec.Cmd, *strings.Builder) {
	t.Helper()
	cmd := child(t, dir, "train", "--config", cfg, "--quiet", "--set", fmt.Sprintf("num_epochs=%d", epochs))
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		if m, err := train.ReadManifest(filepath.Join(dir, "ckpt")); err == nil && m != nil && m.Next.Epoch >= 1 {
			return cmd, &out
		}
		if time.Now().After(deadline) {
			t.Fatalf("no checkpoint after a minute:\n%s", &out)
		}
	}
}

// The same train command started twice on one checkpoint directory: the
// second is refused at once, naming the first one's pid and host, and
// leaves the directory alone; the first completes and its checkpoint and
// log are whole.
func TestTrainTwiceOnOneDirectory(t *testing.T) {
	dir, cfg := trainFixture(t)
	const epochs = 200
	first, out := startLongTrain(t, dir, cfg, epochs)
	code, _, errOut := run(t, "train", "--config", cfg, "--quiet", "--set", fmt.Sprintf("num_epochs=%d", epochs))
	host, _ := os.Hostname()
	if first.ProcessState != nil {
		t.Skip("the first run ended before the second started")
	}
	if code != 1 || !strings.Contains(errOut, "in use") || !strings.Contains(errOut, fmt.Sprintf("pid %d on host %s", first.Process.Pid, host)) {
		t.Errorf("second train: exit %d, %q; want 1 naming pid %d on host %s", code, errOut, first.Process.Pid, host)
	}
	if err := first.Wait(); err != nil {
		t.Fatalf("first train: %v\n%s", err, out)
	}
	ck := filepath.Join(dir, "ckpt")
	man, err := train.ReadManifest(ck)
	if err != nil || man == nil || !man.Done || man.Buckets != epochs*4 {
		t.Fatalf("manifest after the first run: %+v, %v", man, err)
	}
	log, _ := os.ReadFile(filepath.Join(ck, train.LogName))
	if n := strings.Count(string(log), "\n"); n != epochs*4 {
		t.Errorf("training log has %d lines, want %d", n, epochs*4)
	}
	if code, vout, _ := run(t, "verify", "--config", cfg); code != 0 {
		t.Errorf("verify after the run: exit %d\n%s", code, vout)
	}
}

// eval, export and verify (150 calls, three at a time) while train commits
// a checkpoint after every bucket and removes the superseded files: each
// reads one whole commit and none fails. (Before readers started again on
// a changed manifest, calls failed with "unusable
// checkpoint: ... names model.vN.bin: no such file": 5 to 17 of the 150
// in three runs.)
func TestReadersDuringTraining(t *testing.T) {
	dir, cfg := trainFixture(t)
	// Larger files widen the window between a reader's manifest and its
	// files.
	data, _ := os.ReadFile(cfg)
	os.WriteFile(cfg, []byte(strings.Replace(string(data), "dimension = 8", "dimension = 400", 1)), 0o644)
	tr, out := startLongTrain(t, dir, cfg, 100000)
	var mu sync.Mutex
	failed := 0
	var wg sync.WaitGroup
	for g := range 3 {
		wg.Go(func() {
			for i := range 50 {
				args := [][]string{
					{"eval", "--config", cfg, "--rel-col", "1", "--edges", filepath.Join(dir, "test.txt"), "--format", "json"},
					{"verify", "--checkpoint", filepath.Join(dir, "ckpt")},
					{"export", "--config", cfg, "--out", filepath.Join(dir, fmt.Sprintf("emb%d.tsv", g))},
				}[(i+g)%3]
				if code, o, e := run(t, args...); code != 0 {
					mu.Lock()
					failed++
					if failed <= 3 {
						t.Errorf("%s during training: exit %d\n%s%s", args[0], code, o, e)
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if tr.ProcessState != nil {
		t.Fatalf("train ended during the reads:\n%s", out)
	}
	tr.Process.Signal(syscall.SIGINT)
	tr.Wait()
	if failed > 0 {
		t.Errorf("%d of 150 reads failed", failed)
	}
}
