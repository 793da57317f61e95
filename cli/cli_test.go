package cli

import (
	"bytes"
	"flag"
	"reflect"
	"strings"
	"testing"
)

func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = Main(args, strings.NewReader(""), &o, &e)
	return code, o.String(), e.String()
}

func TestExitCodes(t *testing.T) {
	if code, out, _ := run(t, "version"); code != 0 || !strings.Contains(out, Version) {
		t.Errorf("version: code %d, out %q", code, out)
	}
	if code, _, errOut := run(t, "no-such-command"); code != 2 || !strings.Contains(errOut, "unknown command") {
		t.Errorf("unknown command: code %d, stderr %q", code, errOut)
	}
	for _, name := range commandNames() {
		code, out, errOut := run(t, name, "--bogus")
		if code != 2 || !strings.Contains(errOut, "bogus") || out != "" {
			t.Errorf("%s --bogus: code %d, stdout %q (want empty), stderr %q", name, code, out, errOut)
		}
	}
	if code, out, _ := run(t, "help"); code != 0 || !strings.Contains(out, "Commands:") {
		t.Errorf("help: code %d", code)
	}
	if code, _, _ := run(t); code != 2 {
		t.Errorf("no args: code %d, want 2", code)
	}
}

func TestEveryCommandHasHelp(t *testing.T) {
	for _, name := range commandNames() {
		code, out, errOut := run(t, name, "--help")
		if code != 0 || !strings.Contains(out, "Usage: batchprep "+name) {
			t.Errorf("%s --help: code %d, stdout %q, stderr %q", name, code, out, errOut)
		}
	}
}

func TestParseArgsInterspersed(t *testing.T) {
	cases := []struct {
		args    []string
		wantPos []string
		wantS   []string
		wantN   int
	}{
		{[]string{"f.ctf", "--s", "a", "--n", "3"}, []string{"f.ctf"}, []string{"a"}, 3},
		{[]string{"--s", "a", "f.ctf", "--s", "b", "g"}, []string{"f.ctf", "g"}, []string{"a", "b"}, 0},
		{[]string{"--n", "1", "--", "--s", "x"}, []string{"--s", "x"}, nil, 1},
		{[]string{"a", "--", "-b"}, []string{"a", "-b"}, nil, 0},
	}
	for _, c := range cases {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		var s stringList
		fs.Var(&s, "s", "")
		n := fs.Int("n", 0, "")
		pos, err := parseArgs(fs, c.args)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if !reflect.DeepEqual(pos, c.wantPos) || !reflect.DeepEqual([]string(s), c.wantS) || *n != c.wantN {
			t.Errorf("%v: pos %q s %q n %d; want %q %q %d", c.args, pos, s, *n, c.wantPos, c.wantS, c.wantN)
		}
	}
}
