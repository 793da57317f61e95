package cli

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// checkpointDamages are the whole-file damages of verify_test.go and bit
// flips at the header, inside it, the middle and the end of a file.
func checkpointDamages() []damage {
	return append(damages(), flipAt(0), flipAt(17), flipAt(30), flipAt(-1), flipAt(-9), flipAt(-200))
}

// copyDir copies the regular files of src into a fresh dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	os.RemoveAll(dst)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Type().IsRegular() {
			os.WriteFile(filepath.Join(dst, e.Name()), must(os.ReadFile(filepath.Join(src, e.Name()))), 0o644)
		}
	}
}

// kind maps a checkpoint file name to its role, so that an older version
// of the same role can be swapped in (emb_0_1.v4.bin for emb_0_1.v12.bin).
func kind(name string) string {
	if i := strings.Index(name, ".v"); i > 0 && strings.HasSuffix(name, ".bin") {
		return name[:i]
	}
	return name
}

// For checkpoints and exports: every file of a
// trained checkpoint (manifest, model, each partition's table) and a
// binary export, deleted, emptied, truncated, swapped for its version of
// an earlier checkpoint, or with one bit flipped, is refused by train (which
// must continue from it), eval and export, each naming the file, and
// verify lists it; none is silently used. The training log is checked
// apart (TestTrainingLogChecked): only train appends to it.
func TestCorruptCheckpointDetected(t *testing.T) {
	dir, cfg := trainFixture(t)
	ckpt := filepath.Join(dir, "ckpt")
	if code, _, e := run(t, "train", "--config", cfg, "--quiet", "--set", "num_epochs=1"); code != 0 {
		t.Fatal(e)
	}
	older := filepath.Join(dir, "older")
	copyDir(t, ckpt, older)
	if code, _, e := run(t, "train", "--config", cfg, "--quiet"); code != 0 {
		t.Fatal(e)
	}
	pristine := filepath.Join(dir, "pristine")
	copyDir(t, ckpt, pristine)
	oldByKind := map[string][]byte{}
	for _, e := range must(os.ReadDir(older)) {
		oldByKind[kind(e.Name())] = must(os.ReadFile(filepath.Join(older, e.Name())))
	}
	bin := filepath.Join(dir, "emb.bin")
	if code, _, e := run(t, "export", "--config", cfg, "--format", "binary", "--out", bin); code != 0 {
		t.Fatal(e)
	}
	_, wantEval, _ := run(t, "eval", "--config", cfg, "--edges", filepath.Join(dir, "test.txt"), "--rel-col", "1")
	var files []string
	for _, e := range must(os.ReadDir(pristine)) {
		if n := e.Name(); n != "training_log.jsonl" && n != "training.svg" && n != "train.lock" {
			files = append(files, n)
		}
	}
	sort.Strings(files)
	if len(files) != 4 { // manifest, model, two partitions
		t.Fatalf("checkpoint files %v", files)
	}
	tried := 0
	for _, name := range files {
		for _, d := range checkpointDamages() {
			copyDir(t, pristine, ckpt)
			path := filepath.Join(ckpt, name)
			cur := must(os.ReadFile(path))
			if err := d.apply(path, cur, oldByKind[kind(name)]); err != nil {
				t.Fatal(err)
			}
			if now, err := os.ReadFile(path); err == nil && string(now) == string(cur) {
				continue // a flip past the end of a short file
			}
			tried++
			for _, c := range [][]string{
				{"train", "--config", cfg, "--quiet", "--set", "num_epochs=4"},
				{"eval", "--config", cfg, "--edges", filepath.Join(dir, "test.txt"), "--rel-col", "1"},
				{"export", "--config", cfg},
			} {
				code, out, e := run(t, c...)
				checkMessages(t, e)
				named := strings.Contains(e, name) || (name == "checkpoint.json" && d.name == "delete" && strings.Contains(e, "training_log.jsonl"))
				if code != 1 || !named {
					t.Errorf("%s %s: %s exit %d (want 1 naming the file), stderr %q", name, d.name, c[0], code, e)
				}
				if c[0] == "eval" && code == 0 && out != wantEval {
					t.Errorf("%s %s: eval used the damaged checkpoint", name, d.name)
				}
			}
			code, out, _ := run(t, "verify", "--config", cfg)
			checkMessages(t, out)
			if code != 1 || !strings.Contains(out, "problem") || !strings.Contains(out, name) {
				t.Errorf("%s %s: verify exit %d, did not name the file:\n%s", name, d.name, code, out)
			}
		}
	}
	clean := must(os.ReadFile(bin))
	for _, d := range checkpointDamages() {
		os.WriteFile(bin, clean, 0o644)
		if d.name == "other import's version" {
			continue
		}
		if err := d.apply(bin, clean, nil); err != nil {
			t.Fatal(err)
		}
		tried++
		code, out, _ := run(t, "verify", "--export", bin)
		checkMessages(t, out)
		if code != 1 || !strings.Contains(out, "problem  ") || !strings.Contains(out, "emb.bin") {
			t.Errorf("export file %s: verify exit %d:\n%s", d.name, code, out)
		}
	}
	t.Logf("%d damaged files, each refused by train, eval, export and verify (exports: verify)", tried)
}

// The training log (appended to by train only): a damaged log, or one of
// another run, is refused by train naming the file, the line and the
// column, and listed by verify; a deleted or emptied log is fine (a new
// one starts). eval and export do not read it.
func TestTrainingLogChecked(t *testing.T) {
	dir, cfg := trainFixture(t)
	ckpt := filepath.Join(dir, "ckpt")
	if code, _, e := run(t, "train", "--config", cfg, "--quiet", "--set", "num_epochs=2"); code != 0 {
		t.Fatal(e)
	}
	logPath := filepath.Join(ckpt, "training_log.jsonl")
	good := string(must(os.ReadFile(logPath)))
	lines := strings.SplitAfter(good, "\n")
	lines = lines[:len(lines)-1]
	for _, c := range []struct {
		name, log, msg string // msg "": accepted
	}{
		{"deleted", "", ""},
		{"fewer lines (a kill between a checkpoint and its line)", strings.Join(lines[:5], ""), ""},
		{"last line cut short", good[:len(good)-20], "the last line is cut short"},
		{"no final newline", good[:len(good)-1], "the last line is cut short"},
		{"a garbage line", lines[0] + "\x00\x01garbage\n" + strings.Join(lines[1:], ""), "line 2, column 1: not a training log entry"},
		{"a line of another kind", lines[0] + "{\"hello\":1}\n", "line 2, column 1: not a training log entry"},
		{"lines out of order", lines[1] + lines[0], "line 2, column 1: bucket position"},
		{"another run's longer log", good + good[:0] + strings.Join(lines, ""), "lines of two runs are mixed"},
		{"a flipped brace", "[" + good[1:], "line 1, column 9: not a training log entry"},
	} {
		t.Run(c.name, func(t *testing.T) {
			os.WriteFile(logPath, []byte(c.log), 0o644)
			if c.name == "deleted" {
				os.Remove(logPath)
			}
			code, _, e := run(t, "train", "--config", cfg, "--quiet")
			switch {
			case c.msg == "" && code != 0:
				t.Errorf("a sound log refused: %s", e)
			case c.msg != "" && (code != 1 || !strings.Contains(e, logPath) || !strings.Contains(e, c.msg)):
				t.Errorf("exit %d, stderr %q, want %q naming %s", code, e, c.msg, logPath)
			}
			checkMessages(t, e)
			if c.msg != "" {
				code, out, _ := run(t, "verify", "--checkpoint", ckpt)
				if code != 1 || !strings.Contains(out, "training_log.jsonl") {
					t.Errorf("verify exit %d:\n%s", code, out)
				}
			}
			if code, _, e := run(t, "export", "--config", cfg); code != 0 {
				t.Errorf("export reads the log: %s", e)
			}
		})
	}
}
