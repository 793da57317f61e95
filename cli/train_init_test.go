package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// init_path naming a PBG checkpoint (written by export --format pbg)
// starts a run from its values: with lr = 0 the new run exports exactly
// the first run's model. A directory that is not a PBG checkpoint is
// refused.
func TestTrainInitPathPBG(t *testing.T) {
	dir, cfg := exportFixture(t, "affine", "cos", false)
	if code, _, errOut := run(t, "train", "--quiet", "--config", cfg); code != 0 {
		t.Fatalf("train: %s", errOut)
	}
	pbgDir := filepath.Join(dir, "pbg")
	if code, _, errOut := run(t, "export", "--config", cfg, "--format", "pbg", "--out", pbgDir); code != 0 {
		t.Fatalf("export: %s", errOut)
	}
	_, want, _ := run(t, "export", "--config", cfg)
	set := []string{"--set", "checkpoint_path=" + filepath.Join(dir, "ckpt2"), "--set", "lr=0", "--set", "num_epochs=1"}
	code, _, errOut := run(t, append([]string{"train", "--quiet", "--config", cfg, "--set", "init_path=" + pbgDir}, set...)...)
	if code != 0 {
		t.Fatalf("train from init_path: %s", errOut)
	}
	_, got, _ := run(t, append([]string{"export", "--config", cfg}, set...)...)
	if got != want || len(got) < 1000 {
		t.Fatalf("export after an lr=0 run from init_path differs (%d and %d bytes)", len(got), len(want))
	}
	code, _, errOut = run(t, append([]string{"train", "--quiet", "--config", cfg, "--set", "init_path=" + dir,
		"--set", "checkpoint_path=" + filepath.Join(dir, "ckpt3")}, set[2:]...)...)
	if code == 0 || !strings.Contains(errOut, "init_path must be a PyTorch-BigGraph checkpoint directory") {
		t.Fatalf("init_path without a checkpoint: exit %d: %s", code, errOut)
	}
}
