//go:build linux

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/batchprep/batchprep/graph/train"
)

// For train: when the next checkpoint cannot be
// written (a full disk: refused before training), or the checkpoint directory is read-only (train
// then fails opening its log, before training), train exits 1 naming the
// file it could not write and why; the previous checkpoint stays
// byte for byte, with no temporary or partial file beside it, and the run
// continues from it once there is room.
func TestFullDiskTrainCheckpoint(t *testing.T) {
	if testing.Short() {
		t.Skip("mounts a tmpfs; skipped with -short")
	}
	mnt := mountTmpfs(t, "1m")
	_, cfg := trainFixture(t)
	ckpt := filepath.Join(mnt, "ckpt")
	at := "checkpoint_path=" + ckpt
	if code, _, e := run(t, "train", "--config", cfg, "--quiet", "--set", at, "--set", "num_epochs=1"); code != 0 {
		t.Fatal(e)
	}
	before := takeFileSet(t, mnt, "ckpt")
	fill(t, mnt)
	check := func(t *testing.T, reason, file string) {
		t.Helper()
		code, _, e := run(t, "train", "--config", cfg, "--quiet", "--set", at)
		t.Logf("stderr: %s", e)
		if code != 1 || !strings.Contains(e, reason) || !strings.Contains(e, file) {
			t.Errorf("exit %d, stderr %q: want 1 naming the file and %q", code, e, reason)
		}
		if now := takeFileSet(t, mnt, "ckpt"); !now.equal(before) {
			t.Errorf("the previous checkpoint changed:\nbefore\n%s\nnow\n%s", before, now)
		}
		for _, f := range must(os.ReadDir(ckpt)) {
			if strings.HasPrefix(f.Name(), ".") {
				t.Errorf("temporary %s left", f.Name())
			}
		}
		if c := train.VerifyCheckpoint(ckpt); len(c.Problems)+len(c.Notes) > 0 {
			t.Errorf("checkpoint after the failure: %v %v", c.Problems, c.Notes)
		}
	}
	// The disk check refuses the run before it starts (the model's
	// checkpoint size against the free space).
	t.Run("full disk", func(t *testing.T) { check(t, "more disk space", ckpt+": checkpoints need about") })
	os.Remove(filepath.Join(mnt, "filler"))
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Fatalf("remount read-only: %v", err)
	}
	t.Run("read-only", func(t *testing.T) { check(t, "read-only file system", ckpt+"/training_log.jsonl") })
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", syscall.MS_REMOUNT, ""); err != nil {
		t.Fatalf("remount read-write: %v", err)
	}
	if code, out, e := run(t, "train", "--config", cfg, "--quiet", "--set", at); code != 0 || !strings.Contains(out, "trained 12 buckets") {
		t.Errorf("with room again: exit %d %s %s", code, out, e)
	}
}
