package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func inspectFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "in.ctf")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func inspectJSON(t *testing.T, args ...string) (int, map[string]any, string) {
	t.Helper()
	code, out, errOut := run(t, append([]string{"inspect", "--format", "json"}, args...)...)
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("inspect %v: output is not JSON (%v): %q, stderr %q", args, err, out, errOut)
	}
	return code, m, errOut
}

func TestInspectJSON(t *testing.T) {
	p := inspectFile(t, "1 |a 1 2 |b 3:1\n1 |a 3 4\n2 |a 5 |b 0:2\n")
	code, m, _ := inspectJSON(t, p, "--stream", "a:2", "--stream", "b:4:sparse", "--chunk-sequences", "1")
	if code != 0 {
		t.Fatalf("code %d: %v", code, m)
	}
	samples := m["samples"].(map[string]any)
	if m["sequences"] != 2.0 || samples["a"] != 3.0 || samples["b"] != 2.0 || m["chunks"] != 2.0 || m["errors"] != 0.0 || m["warnings"] != 1.0 {
		t.Errorf("report %v", m)
	}
	diags := m["diagnostics"].([]any)
	if len(diags) != 1 || diags[0].(map[string]any)["kind"] != "dense-short" || diags[0].(map[string]any)["line"] != 3.0 {
		t.Errorf("diagnostics %v", diags)
	}
	hist := m["length_histogram"].([]any)
	if len(hist) != 2 || hist[0].(map[string]any)["count"] != 1.0 {
		t.Errorf("histogram %v", hist)
	}
}

func TestInspectInfersStreams(t *testing.T) {
	p := inspectFile(t, "|x 1 2 3 |y 7:1\n|x 1 |y 2:1 9:2\n")
	code, out, _ := run(t, "inspect", p)
	if code != 0 || !strings.Contains(out, "--stream x:3 --stream y:10:sparse") || !strings.Contains(out, "line mode") {
		t.Errorf("code %d, out:\n%s", code, out)
	}
}

func TestInspectBudget(t *testing.T) {
	p := inspectFile(t, "1 |a 1\n2 |a x\n3 |a 2 2\n")
	code, m, errOut := inspectJSON(t, p, "--stream", "a:1")
	if code != 1 || m["fatal"] == nil || !strings.Contains(errOut, "max_errors") {
		t.Errorf("budget 0: code %d, fatal %v, stderr %q", code, m["fatal"], errOut)
	}
	code, m, _ = inspectJSON(t, p, "--stream", "a:1", "--max-errors", "2")
	if code != 0 || m["errors"] != 2.0 || len(m["diagnostics"].([]any)) != 2 {
		t.Errorf("budget 2: code %d, report %v", code, m)
	}
	d := m["diagnostics"].([]any)[0].(map[string]any)
	if d["line"] != 2.0 || d["col"] != 6.0 || d["offset"] != 12.0 || d["severity"] != "error" {
		t.Errorf("first diagnostic %v", d)
	}
}

func TestInspectUsage(t *testing.T) {
	p := inspectFile(t, "1 |a 1\n")
	for _, args := range [][]string{
		{"inspect"},
		{"inspect", p, p},
		{"inspect", p, "--stream", "a"},
		{"inspect", p, "--format", "xml"},
		{"inspect", p, "--stream", "a:1", "--defines-mb-size", "zz"},
		{"inspect", p, "--stream", "a:1", "--chunk-bytes", "5", "--chunk-sequences", "2"},
	} {
		if code, _, _ := run(t, args...); code != 2 {
			t.Errorf("%v: code %d, want 2", args, code)
		}
	}
	if code, _, _ := run(t, "inspect", filepath.Join(t.TempDir(), "missing")); code != 1 {
		t.Errorf("missing file: code %d, want 1", code)
	}
}
