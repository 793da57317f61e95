package cli

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// export --format pbg writes PBG's checkpoint layout from which
// python/tools/score_pbg.py (h5py only, no batchprep code) ranks the test
// edges of Nations exactly as eval does: every operator, dynamic
// relations and global embeddings, two partitions. Skipped when Debian's
// python3-h5py is absent (the Go side of the layout is tested in
// graph/pbg).
func TestExportPBGReproducesEval(t *testing.T) {
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import h5py").Run(); err != nil {
		t.Skip("python3-h5py is not installed (apt-get install python3-h5py): score_pbg.py not checked")
	}
	for _, v := range []struct {
		op, cmp string
		dynamic bool
	}{
		{"complex_diagonal", "dot", true},
		{"affine", "l2", false},
		{"linear", "cos", true},
		{"translation", "squared_l2", false},
	} {
		t.Run(fmt.Sprintf("%s-%s-dynamic-%v", v.op, v.cmp, v.dynamic), func(t *testing.T) {
			dir, cfg := exportFixture(t, v.op, v.cmp, v.dynamic)
			if code, _, errOut := run(t, "train", "--quiet", "--config", cfg); code != 0 {
				t.Fatalf("train: %s", errOut)
			}
			out := filepath.Join(dir, "pbg")
			code, _, errOut := run(t, "export", "--config", cfg, "--format", "pbg", "--out", out)
			if code != 0 || !strings.Contains(errOut, "PBG checkpoint version 3") {
				t.Fatalf("export --format pbg: exit %d: %s", code, errOut)
			}
			code, evalOut, errOut := run(t, "eval", "--config", cfg, "--rel-col", "1", "--edges", filepath.Join(dir, "test.txt"),
				"--filter", filepath.Join(dir, "train.txt"), "--filter", filepath.Join(dir, "valid.txt"), "--format", "json")
			if code != 0 {
				t.Fatalf("eval: %s", errOut)
			}
			var want map[string]any
			if err := json.Unmarshal([]byte(evalOut[:strings.LastIndex(evalOut, "}")+1]), &want); err != nil {
				t.Fatalf("eval output %q: %v", evalOut, err)
			}
			pyOut, err := exec.Command(py, filepath.Join("..", "python", "tools", "score_pbg.py"), out, filepath.Join(dir, "test.txt"),
				"--filter", filepath.Join(dir, "train.txt"), "--filter", filepath.Join(dir, "valid.txt")).CombinedOutput()
			var got map[string]any
			if err != nil || json.Unmarshal(pyOut, &got) != nil {
				t.Fatalf("score_pbg.py: %v: %s", err, pyOut)
			}
			for _, k := range []string{"count", "unknown", "mrr", "hits@1", "hits@3", "hits@10", "mean_rank"} {
				if got[k] != want[k] {
					t.Errorf("%s: score_pbg.py %v, eval %v", k, got[k], want[k])
				}
			}
			if c, _ := want["count"].(float64); c < 300 {
				t.Fatalf("only %v ranks", want["count"])
			}
		})
	}
}

// --format pbg needs a directory.
func TestExportPBGNeedsOut(t *testing.T) {
	for _, a := range [][]string{{}, {"--out", "-"}} {
		code, _, errOut := run(t, append([]string{"export", "--config", "x.toml", "--format", "pbg"}, a...)...)
		if code != 2 || !strings.Contains(errOut, "--format pbg needs --out DIR") {
			t.Fatalf("%v: exit %d: %s", a, code, errOut)
		}
	}
}
