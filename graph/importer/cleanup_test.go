package importer

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// A failed import leaves nothing behind: the directories it made for the
// store (entity_path's and the edge paths' parents) are removed again,
// and a directory that existed before is kept.
func TestFailedImportLeavesNothing(t *testing.T) {
	root := t.TempDir()
	cfg := kgConfig(t, filepath.Join(root, "a", "b"), 2, 2)
	if _, err := Import(context.Background(), cfg, DefaultOptions(), []string{filepath.Join(root, "missing0"), filepath.Join(root, "missing1")}); err == nil {
		t.Fatal("import of missing files succeeded")
	}
	ents, _ := os.ReadDir(root)
	if len(ents) != 0 {
		t.Errorf("a failed import left %v in %s", ents[0].Name(), root)
	}
	kept := filepath.Join(root, "kept")
	os.Mkdir(kept, 0o755)
	cfg = kgConfig(t, kept, 2, 1)
	if _, err := Import(context.Background(), cfg, DefaultOptions(), []string{filepath.Join(root, "missing")}); err == nil {
		t.Fatal("import of a missing file succeeded")
	}
	if ents, err := os.ReadDir(kept); err != nil || len(ents) != 0 {
		t.Errorf("%s after a failed import: %v, %v", kept, ents, err)
	}
}
