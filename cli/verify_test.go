package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// damage is one way of spoiling a file batchprep wrote.
type damage struct {
	name  string
	apply func(path string, data, other []byte) error
}

// damages are the whole-file damages; flipAt adds bit flips.
func damages() []damage {
	return []damage{
		{"delete", func(p string, _, _ []byte) error { return os.Remove(p) }},
		{"truncate to half", func(p string, b, _ []byte) error { return os.WriteFile(p, b[:len(b)/2], 0o644) }},
		{"truncate by one", func(p string, b, _ []byte) error { return os.WriteFile(p, b[:max(len(b)-1, 0)], 0o644) }},
		{"empty", func(p string, _, _ []byte) error { return os.WriteFile(p, nil, 0o644) }},
		{"other import's version", func(p string, _, o []byte) error { return os.WriteFile(p, o, 0o644) }},
	}
}

// flipAt returns the damage that flips the low bit of byte i (from the end
// when i < 0).
func flipAt(i int) damage {
	return damage{"flip byte " + itoa(i), func(p string, b, _ []byte) error {
		c := append([]byte(nil), b...)
		j := i
		if j < 0 {
			j += len(c)
		}
		if j < 0 || j >= len(c) {
			return nil
		}
		c[j] ^= 1
		return os.WriteFile(p, c, 0o644)
	}}
}

// storeFiles lists the regular files under the store directories.
func storeFiles(t *testing.T, root string, dirs ...string) []string {
	t.Helper()
	var out []string
	for _, d := range dirs {
		ents, err := os.ReadDir(filepath.Join(root, d))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if e.Type().IsRegular() {
				out = append(out, filepath.Join(d, e.Name()))
			}
		}
	}
	sort.Strings(out)
	return out
}

// Flip bytes in, truncate, delete, empty and
// swap with another import's version every file of an edge store. verify
// exits 1 naming the file; plan either fails naming the file or, when it
// does not read that file (entity names), prints exactly the undamaged
// schedule: nothing damaged is used silently.
func TestCorruptStoreDetected(t *testing.T) {
	f := newBigFixture(t, 10, 3000)
	other := t.TempDir() // another import of other data, same layout
	for _, name := range []string{f.cfg, f.small} {
		if err := os.WriteFile(filepath.Join(other, name), must(os.ReadFile(filepath.Join(f.dir, name))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if code, _, e := run(t, "import", "--config", filepath.Join(other, f.cfg), "--rel-col", "1", "--quiet", filepath.Join(other, f.small)); code != 0 {
		t.Fatal(e)
	}
	cfgPath := filepath.Join(f.dir, f.cfg)
	importHere := func() {
		t.Helper()
		if code, _, e := run(t, "import", "--config", cfgPath, "--rel-col", "1", "--quiet", filepath.Join(f.dir, f.edges)); code != 0 {
			t.Fatal(e)
		}
	}
	importHere()
	_, wantPlan, _ := run(t, "plan", "--config", cfgPath, "--quiet")
	if code, out, e := run(t, "verify", "--config", cfgPath); code != 0 || !strings.Contains(out, "store sound") {
		t.Fatalf("sound store: exit %d, %s %s", code, out, e)
	}
	ds := append(damages(), flipAt(0), flipAt(17), flipAt(70), flipAt(-1), flipAt(-9))
	files := storeFiles(t, f.dir, "ent", "edges")
	if len(files) < 10 {
		t.Fatalf("store files: %v", files)
	}
	tried := 0
	for _, name := range files {
		p := filepath.Join(f.dir, name)
		orig := must(os.ReadFile(p))
		otherData, _ := os.ReadFile(filepath.Join(other, name))
		for _, d := range ds {
			if d.name == "other import's version" && (otherData == nil || bytes.Equal(otherData, orig)) {
				continue
			}
			if err := d.apply(p, orig, otherData); err != nil {
				t.Fatal(err)
			}
			if now, err := os.ReadFile(p); err == nil && bytes.Equal(now, orig) {
				continue // the damage changed nothing (a file too short for the offset)
			}
			tried++
			code, out, _ := run(t, "verify", "--config", cfgPath)
			if code != 1 || !strings.Contains(out, "problem") || !strings.Contains(out, name) {
				t.Errorf("%s, %s: verify exit %d:\n%s", name, d.name, code, out)
			}
			code, planOut, planErr := run(t, "plan", "--config", cfgPath, "--quiet")
			switch {
			case code == 0 && planOut != wantPlan:
				t.Errorf("%s, %s: plan used the damaged file silently", name, d.name)
			case code != 0 && !strings.Contains(planErr, name):
				t.Errorf("%s, %s: plan failed without naming the file: %s", name, d.name, planErr)
			}
			if err := os.WriteFile(p, orig, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Logf("%d damaged files tried", tried)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
