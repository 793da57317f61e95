package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/internal/shared"
)

// The example configs work as their comments say, on the
// real data: import, plan and verify, run from another directory than the
// config's (paths are relative to the config file).
func TestExampleConfigs(t *testing.T) {
	if testing.Short() {
		t.Skip("imports real graphs; skipped with -short")
	}
	fb := shared.Need(t, "kg", "fb15k-237")
	snap := shared.Need(t, "graphs", "ca-GrQc.txt")
	dir := filepath.Join(t.TempDir(), "examples")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cfg   string
		args  []string
		edges string
	}{
		{"fb15k-237.toml", []string{"--lhs-col", "0", "--rel-col", "1", "--rhs-col", "2",
			filepath.Join(fb, "train.txt"), filepath.Join(fb, "valid.txt"), filepath.Join(fb, "test.txt")}, "edges: 13605750"}, // train's 272,115 edges x 50 epochs (edge_roles: valid and test are not walked)
		{"snap-ca-grqc.toml", []string{snap}, "edges: 289800"},
	} {
		t.Run(c.cfg, func(t *testing.T) {
			p := filepath.Join(dir, c.cfg)
			if err := os.WriteFile(p, must(os.ReadFile(filepath.Join("..", "examples", c.cfg))), 0o644); err != nil {
				t.Fatal(err)
			}
			if code, _, e := run(t, append([]string{"import", "--config", p, "--quiet"}, c.args...)...); code != 0 {
				t.Fatalf("import: %s", e)
			}
			code, out, e := run(t, "plan", "--config", p, "--quiet", "--format", "summary")
			if code != 0 || !strings.Contains(out, c.edges) {
				t.Fatalf("plan: exit %d, %s %s", code, out, e)
			}
			if code, out, _ := run(t, "verify", "--config", p); code != 0 || !strings.Contains(out, "store sound") {
				t.Fatalf("verify: %s", out)
			}
		})
	}
}
