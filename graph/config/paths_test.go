package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const minimalTOML = `entity_path = "data/ent"
edge_paths = ["data/edges", "/abs/edges"]
init_path = "init"
[entities.n]
num_partitions = 1
[[relations]]
name = "r"
lhs = "n"
rhs = "n"
`

// Invariant 6: Load resolves relative paths against the config file's
// directory; absolute ones stay; Parse leaves them as written.
func TestLoadPathsRelativeToConfigFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "g")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "fb.toml")
	if err := os.WriteFile(p, []byte("checkpoint_path = \"model\"\n"+minimalTOML), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "data/ent"); c.EntityPath != want {
		t.Errorf("entity_path %q, want %q", c.EntityPath, want)
	}
	if want := filepath.Join(dir, "data/edges"); c.EdgePaths[0] != want || c.EdgePaths[1] != "/abs/edges" {
		t.Errorf("edge_paths %q", c.EdgePaths)
	}
	if c.CheckpointPath != filepath.Join(dir, "model") || *c.InitPath != filepath.Join(dir, "init") {
		t.Errorf("checkpoint_path %q init_path %q", c.CheckpointPath, *c.InitPath)
	}
	raw, err := Parse([]byte(minimalTOML), "toml")
	if err != nil {
		t.Fatal(err)
	}
	if raw.EntityPath != "data/ent" {
		t.Errorf("Parse changed entity_path to %q", raw.EntityPath)
	}
}

// Invariant 7: checkpoint_path is optional for import and plan and
// required to train.
func TestCheckpointPathOnlyForTraining(t *testing.T) {
	c, err := Parse([]byte("dimension = 10\n"+minimalTOML), "toml")
	if err != nil {
		t.Fatalf("a config without checkpoint_path: %v", err)
	}
	err = c.ValidateTraining()
	var ce *Error
	if !errors.As(err, &ce) || ce.Key != "checkpoint_path" {
		t.Errorf("ValidateTraining without checkpoint_path: %v", err)
	}
}

// A duplicate TOML key is reported at a column inside its line (the toml
// package reports the end of the value, past the line's end).
func TestTOMLDuplicateKeyColumn(t *testing.T) {
	doc := "entity_path = \"e\"\nnum_epochs = 1\nnum_epochs = 2\n"
	_, err := Parse([]byte(doc), "toml")
	if err == nil || !strings.Contains(err.Error(), "line 3, column 1:") {
		t.Errorf("error %v, want line 3, column 1", err)
	}
	doc = "entity_path = \"e\"\n  [entities.n]\nnum_partitions = 1\n  [entities.n]\n"
	_, err = Parse([]byte(doc), "toml")
	if err == nil || !strings.Contains(err.Error(), "line 4, column") {
		t.Fatalf("error %v", err)
	}
}
