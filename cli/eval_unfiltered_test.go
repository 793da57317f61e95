package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// eval --filter none ranks without filtering (graph/eval invariant 8,
// tested there against a brute force): the same count as the filtered
// ranking, an MRR no higher, said in the text and the JSON; a stored
// edge set and its file rank alike; none beside a filter file is a usage
// mistake.
func TestEvalFilterNone(t *testing.T) {
	dir, cfg := edgeSetsFixture(t, `edge_roles = ["train", "valid", "test"]`)
	if code, _, errOut := run(t, "train", "--config", cfg, "--quiet"); code != 0 {
		t.Fatalf("train: %s", errOut)
	}
	evalJSON := func(args ...string) map[string]any {
		t.Helper()
		code, out, errOut := run(t, append([]string{"eval", "--config", cfg, "--format", "json"}, args...)...)
		var rep map[string]any
		if code != 0 || json.Unmarshal([]byte(out), &rep) != nil {
			t.Fatalf("eval %q: exit %d\n%s%s", args, code, out, errOut)
		}
		return rep
	}
	filtered := evalJSON("--edge-set", "test")
	raw := evalJSON("--edge-set", "test", "--filter", "none")
	if filtered["filtered"] != true || raw["filtered"] != false {
		t.Errorf("filtered: %v and %v, want true and false", filtered["filtered"], raw["filtered"])
	}
	if raw["count"] != filtered["count"] || raw["mrr"].(float64) >= filtered["mrr"].(float64) {
		t.Errorf("unfiltered count %v mrr %v against filtered count %v mrr %v: want the same count and a lower MRR (Nations has many true edges per pair)",
			raw["count"], raw["mrr"], filtered["count"], filtered["mrr"])
	}
	code, byName, errOut := run(t, "eval", "--config", cfg, "--edge-set", "test", "--filter", "none")
	if code != 0 || !strings.Contains(byName, "filter     none (raw ranks") {
		t.Errorf("eval --filter none text: %d\n%s%s", code, byName, errOut)
	}
	code, byFile, errOut := run(t, "eval", "--config", cfg, "--edges", filepath.Join(dir, "test.txt"), "--rel-col", "1", "--filter", "none")
	if code != 0 || byFile != byName {
		t.Errorf("the stored test edge set and the test file rank differently unfiltered (%d %s):\n%s\n%s", code, errOut, byName, byFile)
	}
	code, _, errOut = run(t, "eval", "--config", cfg, "--edge-set", "test", "--filter", "none", "--filter", filepath.Join(dir, "train.txt"))
	if code != 2 || !strings.Contains(errOut, "--filter none") || !strings.Contains(errOut, "./none") {
		t.Errorf("--filter none with a filter file: exit %d\n%s", code, errOut)
	}
}
