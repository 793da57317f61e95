package config

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// needPython skips a test when the default interpreter is absent.
func needPython(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(DefaultPython); err != nil {
		t.Skipf("%s is not installed (apt-get install python3): Python configs not checked", DefaultPython)
	}
}

// writePy writes a Python config named name in a temporary directory.
func writePy(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Invariant 11: a PBG Python config loads as the JSON config of the same
// dict does, with its relative paths resolved against its own directory.
func TestPythonConfigAgreesWithJSON(t *testing.T) {
	needPython(t)
	a, err := Load("testdata/same.py")
	if err != nil {
		t.Fatal(err)
	}
	b, err := Load("testdata/same.json")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("python and json differ:\n%s\n%s", a.Canonical(), b.Canonical())
	}
	if a.EntityPath != filepath.Join("testdata", "ent") {
		t.Errorf("entity_path %q: not resolved against the file's directory", a.EntityPath)
	}
}

// Invariant 11: every way a Python config can fail is an *Error naming the
// file, with the file's own traceback or the key at fault.
func TestPythonConfigErrors(t *testing.T) {
	needPython(t)
	ok := "def get_torchbiggraph_config():\n    return dict(entity_path='e', edge_paths=['x'], entities={'n': {'num_partitions': 1}}, relations=[dict(name='r', lhs='n', rhs='n')])\n"
	cases := []struct {
		name, text string
		opts       LoadOptions
		key        string
		want       []string
	}{
		{"syntax error", "def get_torchbiggraph_config():\n    return dict(entity_path='e'\n\nx = 1 +\n", LoadOptions{}, "",
			[]string{"evaluating it with Python failed:", "line 2", "SyntaxError"}},
		{"exception at load", "import no_such_module_here\n" + ok, LoadOptions{}, "",
			[]string{"evaluating it with Python failed:\n  Traceback (most recent call last):", "line 1, in <module>", "ModuleNotFoundError: No module named 'no_such_module_here'"}},
		{"exception in the function", "def get_torchbiggraph_config():\n    d = {}\n    return d['entity_path']\n", LoadOptions{}, "",
			[]string{"line 3, in get_torchbiggraph_config", "KeyError: 'entity_path'"}},
		{"no function", "def get_config():\n    return {}\n", LoadOptions{}, "",
			[]string{"defines no function get_torchbiggraph_config()"}},
		{"not a function", "get_torchbiggraph_config = {'entity_path': 'e'}\n", LoadOptions{}, "",
			[]string{"get_torchbiggraph_config is a dict, not a function"}},
		{"returns a list", "def get_torchbiggraph_config():\n    return [1, 2]\n", LoadOptions{}, "",
			[]string{"get_torchbiggraph_config() returned a list, not a dict"}},
		{"a set value", "def get_torchbiggraph_config():\n    return dict(relations=[dict(name={'a'})])\n", LoadOptions{}, "",
			[]string{"relations[0].name: a value of type set has no JSON form"}},
		{"nan", "def get_torchbiggraph_config():\n    return dict(lr=float('nan'))\n", LoadOptions{}, "",
			[]string{"lr: nan is not a finite number"}},
		{"sys.exit", "import sys\nsys.exit(4)\n", LoadOptions{}, "",
			[]string{"the file called sys.exit(4)"}},
		{"unknown key", strings.Replace(ok, "entity_path='e'", "entity_path='e', bogus=1", 1), LoadOptions{}, "bogus",
			[]string{"bogus: unknown key"}},
		{"timeout", "import time\ntime.sleep(30)\n" + ok, LoadOptions{PythonTimeout: 300 * time.Millisecond}, "",
			[]string{"Python did not finish evaluating it within 300ms and was stopped (BATCHPREP_PYTHON_TIMEOUT sets the limit)"}},
		{"no interpreter", ok, LoadOptions{Python: "/nonexistent/python3"}, "",
			[]string{"a Python config needs a Python interpreter, and /nonexistent/python3 is not there: install python3, or set BATCHPREP_PYTHON to one"}},
	}
	for _, c := range cases {
		p := writePy(t, "cfg.py", c.text)
		start := time.Now()
		_, err := LoadWith(context.Background(), p, c.opts)
		t.Logf("%s: %v", c.name, err)
		var ce *Error
		if !errors.As(err, &ce) || ce.File != p || ce.Key != c.key {
			t.Errorf("%s: got %#v, want an *Error for %s with key %q", c.name, err, p, c.key)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v\nwant %q in it", c.name, err, w)
			}
		}
		if strings.Contains(err.Error(), "<string>") || strings.Contains(err.Error(), "runpy") {
			t.Errorf("%s: the loader's own frames are shown:\n%v", c.name, err)
		}
		if time.Since(start) > 10*time.Second {
			t.Errorf("%s: took %v", c.name, time.Since(start))
		}
	}
	// The same dict loads when nothing is wrong.
	if _, err := Load(writePy(t, "cfg.py", ok)); err != nil {
		t.Errorf("a good config: %v", err)
	}
}

// Invariant 11: only a .py file is run; another file defining PBG's
// function is refused with what to do.
func TestPythonConfigOnlyPy(t *testing.T) {
	p := writePy(t, "pbg.cfg", "def get_torchbiggraph_config():\n    return dict(entity_path='e')\n")
	_, err := Load(p)
	if err == nil || !strings.Contains(err.Error(), p+": defines get_torchbiggraph_config() as a PBG Python config does, but only a file named .py is run as Python: rename it") {
		t.Errorf("got %v", err)
	}
}

func TestOptionsFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	o, err := OptionsFromEnv(env(map[string]string{"BATCHPREP_PYTHON": "/opt/py", "BATCHPREP_PYTHON_TIMEOUT": "2m"}))
	if err != nil || o.Python != "/opt/py" || o.PythonTimeout != 2*time.Minute {
		t.Errorf("got %+v, %v", o, err)
	}
	if o, err = OptionsFromEnv(env(map[string]string{"BATCHPREP_PYTHON_TIMEOUT": "1.5"})); err != nil || o.PythonTimeout != 1500*time.Millisecond {
		t.Errorf("seconds: got %+v, %v", o, err)
	}
	if o, err = OptionsFromEnv(env(nil)); err != nil || o != (LoadOptions{}) {
		t.Errorf("unset: got %+v, %v", o, err)
	}
	for _, bad := range []string{"soon", "0", "-3s"} {
		if _, err := OptionsFromEnv(env(map[string]string{"BATCHPREP_PYTHON_TIMEOUT": bad})); err == nil || !strings.Contains(err.Error(), "BATCHPREP_PYTHON_TIMEOUT=") {
			t.Errorf("%q: got %v", bad, err)
		}
	}
}
