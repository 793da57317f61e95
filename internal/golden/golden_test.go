package golden

import (
	"os"
	"path/filepath"
	"testing"
)

// fakeTB records failures instead of stopping the test.
type fakeTB struct {
	testing.TB
	failed bool
}

func (f *fakeTB) Helper()               {}
func (f *fakeTB) Name() string          { return "fake" }
func (f *fakeTB) Logf(string, ...any)   {}
func (f *fakeTB) Fatal(...any)          { f.failed = true }
func (f *fakeTB) Fatalf(string, ...any) { f.failed = true }

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata", "x.golden"), []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, got string
		fail      bool
	}{
		{"x.golden", "a\nb\n", false},
		{"x.golden", "a\nc\n", true},
		{"x.golden", "a\nb\nc\n", true},
		{"missing.golden", "a\n", true},
	} {
		f := &fakeTB{}
		Check(f, c.name, c.got)
		if f.failed != c.fail {
			t.Errorf("Check(%s, %q): failed=%v, want %v", c.name, c.got, f.failed, c.fail)
		}
	}
	*update = true
	defer func() { *update = false }()
	f := &fakeTB{}
	Check(f, "new/y.golden", "z\n")
	if b, err := os.ReadFile(filepath.Join("testdata", "new", "y.golden")); f.failed || err != nil || string(b) != "z\n" {
		t.Errorf("-update did not write the file: %q %v", b, err)
	}
}
