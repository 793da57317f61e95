package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplacesAndLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "state.json")
	if err := Write(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil || string(b) != "new" {
		t.Fatalf("content %q, %v", b, err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("directory holds %d entries, want only the target", len(ents))
	}
}

func TestWriteFailureKeepsOld(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x")
	if err := Write(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A directory in the way makes the rename fail.
	bad := filepath.Join(dir, "sub")
	if err := os.Mkdir(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(bad, []byte("new"), 0o644); err == nil {
		t.Fatal("rename over a non-empty directory succeeded")
	}
	if err := Write(filepath.Join(dir, "missing", "y"), []byte("z"), 0o644); err == nil {
		t.Fatal("write into a missing directory succeeded")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("temporary files left behind: %d entries", len(ents))
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Errorf("old file changed: %q", b)
	}
}
