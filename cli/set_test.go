package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// import and plan take --set as train does: the overrides apply to the
// loaded config, so the store lands where the overridden entity_path and
// edge_paths say, and plan reads it from there; a --set naming no key is
// a usage mistake.
func TestSetOnImportAndPlan(t *testing.T) {
	dir := t.TempDir()
	data, err := nationsFS.ReadFile("kgdata/nations/train.txt")
	if err != nil {
		t.Fatal(err)
	}
	train, cfg := filepath.Join(dir, "train.txt"), filepath.Join(dir, "nations.toml")
	os.WriteFile(train, data, 0o644)
	os.WriteFile(cfg, []byte(nationsTOML), 0o644)
	ent, edges := filepath.Join(dir, "ent2"), filepath.Join(dir, "edges2")
	sets := []string{"--set", "entity_path=" + ent, "--set", `edge_paths=["` + edges + `"]`}

	if code, _, e := run(t, append([]string{"import", "--quiet", "--config", cfg, "--rel-col", "1"}, append(sets, train)...)...); code != 0 {
		t.Fatalf("import --set: exit %d\n%s", code, e)
	}
	for _, p := range []string{ent, edges} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("import --set wrote nothing at %s: %v", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "ent")); err == nil {
		t.Errorf("import --set also wrote the config's own entity_path")
	}
	if code, _, e := run(t, "import", "--quiet", "--config", cfg, "--rel-col", "1", "--set", "no_such_key=1", train); code != 2 || !strings.Contains(e, "--set") || !strings.Contains(e, "no_such_key") {
		t.Errorf("import --set no_such_key=1: exit %d\n%s", code, e)
	}

	if code, _, e := run(t, "plan", "--config", cfg, "--format", "summary"); code != 1 || !strings.Contains(e, "no entity manifest") {
		t.Errorf("plan without --set: exit %d, want 1 (no store at the config's entity_path)\n%s", code, e)
	}
	code, out, e := run(t, append([]string{"plan", "--config", cfg, "--format", "summary"}, sets...)...)
	if code != 0 || !strings.Contains(out, "buckets") {
		t.Errorf("plan --set: exit %d\n%s\n%s", code, out, e)
	}
	if code, _, e := run(t, "plan", "--config", cfg, "--set", "bucket_order=sideways"); code != 1 || !strings.Contains(e, "bucket_order") {
		t.Errorf("plan --set bucket_order=sideways: exit %d\n%s", code, e)
	}
}
