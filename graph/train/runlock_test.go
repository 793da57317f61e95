package train_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/graph/train"
)

// A Trainer holds its checkpoint directory from New until Run returns (or
// Close): a second Trainer of the directory is refused with ErrInUse
// naming this process and host, and is accepted once the first released
// it.
func TestRunLock(t *testing.T) {
	dir := t.TempDir()
	cfg := fixture(t, dir, ringEdges(20), tinySettings, 1)
	st := openStore(t, cfg)
	first, err := train.New(cfg, st, train.Options{})
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	_, err = train.New(cfg, st, train.Options{})
	if !errors.Is(err, train.ErrInUse) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d on host %s", os.Getpid(), host)) {
		t.Fatalf("second New: %v; want ErrInUse naming this process", err)
	}
	first.Close()
	second, err := train.New(cfg, st, train.Options{})
	if err != nil {
		t.Fatalf("after Close: %v", err)
	}
	second.Close()
	if b, err := os.ReadFile(filepath.Join(cfg.CheckpointPath, train.RunLockName)); err != nil || !strings.HasPrefix(string(b), "pid ") {
		t.Errorf("%s: %q, %v", train.RunLockName, b, err)
	}
}
