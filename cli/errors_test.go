package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// fullWriter fails every write as a full disk (or /dev/full) does.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// badInputFixture writes the files the table test feeds to every command.
type badInputFixture struct {
	dir, ok, empty, notCTF, badNum, cfg, noCkpt, dupTOML, twoCol, readState, planState, fifo, cached, badState string
}

func newBadInputFixture(t *testing.T) badInputFixture {
	t.Helper()
	d := t.TempDir()
	f := badInputFixture{dir: d}
	write := func(name, content string) string {
		p := filepath.Join(d, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	f.ok = write("ok.ctf", "1 |x 1 2\n2 |x 3 4\n3 |x 5 6\n")
	f.empty = write("empty.ctf", "")
	var b strings.Builder // a binary-looking file with 102 "|name" tokens
	for i := 0; i < 102; i++ {
		fmt.Fprintf(&b, "\x7fELF|n%d \x00\x01", i)
	}
	f.notCTF = write("prog.bin", b.String())
	f.badNum = write("bad.ctf", "1 |x 1 2\n2 |x 3 zz\n3 |x 5 6\n")
	graphKeys := "[entities.node]\nnum_partitions = 2\n[[relations]]\nname = \"link\"\nlhs = \"node\"\nrhs = \"node\"\n"
	// Relative paths, a config in a subdirectory, no checkpoint_path:
	f.cfg = write("g/graph.toml", "entity_path = \"ent\"\nedge_paths = [\"edges\"]\nworkers = 1\nbatch_size = 10\n"+graphKeys)
	f.noCkpt = f.cfg
	f.dupTOML = write("g/dup.toml", "entity_path = \"ent\"\nedge_paths = [\"edges\"]\nnum_epochs = 1\nnum_epochs = 2\n"+graphKeys)
	var e strings.Builder
	e.WriteString("# FromNodeId\tToNodeId\n")
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&e, "%d\t%d\n", i%17, (i*5)%23)
	}
	f.twoCol = write("snap.txt", e.String())
	f.readState = filepath.Join(d, "read.json")
	if code, _, errOut := run(t, "read", f.ok, "--stream", "x:2", "--state-out", f.readState); code != 0 {
		t.Fatalf("fixture read state: %s", errOut)
	}
	if code, _, errOut := run(t, "import", "--config", f.cfg, "--quiet", f.twoCol); code != 0 {
		t.Fatalf("fixture import: %s", errOut)
	}
	f.planState = filepath.Join(d, "plan.json")
	if code, _, errOut := run(t, "plan", "--config", f.cfg, "--quiet", "--max-batches", "2", "--state-out", f.planState); code != 0 {
		t.Fatalf("fixture plan state: %s", errOut)
	}
	f.cached = write("cached.ctf", "1 |x 1 2\n2 |x 3 4\n")
	if code, _, errOut := run(t, "read", f.cached, "--stream", "x:2", "--cache-index", "--format", "summary"); code != 0 {
		t.Fatalf("fixture read --cache-index: %s", errOut)
	}
	f.badState = write("bad-state.json", "{\"version\": \"1\"}\n")
	f.fifo = filepath.Join(d, "fifo")
	if err := syscall.Mkfifo(f.fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// linePrefix is the one prefix every stderr line carries; after it no
// package or command name may follow.
var repeatedPrefix = regexp.MustCompile(`^batchprep [a-z]+: (batchprep|ctf|source|config|edgestore|importer|plan|inspect|read|import|corpus|randomize|train|eval|export|serve|coord|coordinator|verify): `)

// badMessage matches what no message may show: Go struct
// syntax, a library's own text, a count of one with a plural noun.
var badMessage = regexp.MustCompile(`\{[A-Z][A-Za-z]*:|json: (unsupported|cannot|invalid)|context deadline exceeded|context canceled|` +
	`: parse error|flag provided but not defined|for flag -|` +
	`\b1 (problems|fields|buckets|edges|entities|errors|sequences|lines|chunks|relations|edge sets|arguments|elements|epochs|tables|types|batches|partition loads|workers)\b`)

// checkMessages fails t for each line of out that badMessage matches.
func checkMessages(t *testing.T, out string) {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if m := badMessage.FindString(line); m != "" {
			t.Errorf("a message shows %q: %q", m, line)
		}
	}
}

// TestBadInputsTable pins, for every command, the exit code and the message
// of bad inputs: 1 for bad data or a runtime failure, 2 for a usage
// mistake, and one prefix per message.
func TestBadInputsTable(t *testing.T) {
	f := newBadInputFixture(t)
	cases := []struct {
		name   string
		args   []string
		stdout func() *bytes.Buffer // nil: a buffer; fullWriter when full is set
		full   bool
		code   int
		msg    string // in stderr
		out    string // in stdout, when set
	}{
		// 3: a huge dimension is refused before allocating, naming value and limit.
		{name: "huge dense dim", args: []string{"read", f.ok, "--stream", "x:99999999999"}, code: 2, msg: "dense dim 99999999999 exceeds the limit 16777216"},
		// 4: lost stdout is exit 1 for every command.
		{name: "inspect to a full disk", args: []string{"inspect", f.ok}, full: true, code: 1, msg: "batchprep inspect: writing output: no space left on device"},
		{name: "demo to a full disk", args: []string{"demo"}, full: true, code: 1, msg: "batchprep demo: writing output:"},
		{name: "read to a full disk", args: []string{"read", f.ok, "--stream", "x:2"}, full: true, code: 1, msg: "batchprep read: writing output:"},
		{name: "plan to a full disk", args: []string{"plan", "--config", f.cfg, "--quiet"}, full: true, code: 1, msg: "batchprep plan: writing output:"},
		{name: "version to a full disk", args: []string{"version"}, full: true, code: 1, msg: "writing output"},
		// 5: bad data is exit 1, not usage.
		{name: "inspect a binary", args: []string{"inspect", f.notCTF}, code: 1, msg: "prog.bin: the streams inferred from it cannot be read (is it a CTF file?): 102 streams, at most 64"},
		// 8: runs that deliver nothing say so.
		{name: "start past the epochs", args: []string{"read", f.ok, "--stream", "x:2", "--start", "99999999999"}, code: 0, msg: "nothing to read: --start 99999999999 is in epoch"},
		{name: "state past the epochs", args: []string{"read", f.ok, "--stream", "x:2", "--state-in", f.readState}, code: 0, msg: "nothing to read: the state in " + f.readState + " is at epoch 1"},
		{name: "plan state at the end", args: []string{"plan", "--config", f.cfg, "--quiet", "--state-in", f.planState + ".end"}, code: 0, msg: "nothing to plan: the state in"},
		// 9: one prefix, readable state mix-ups, consistent counts, file names.
		{name: "missing file", args: []string{"inspect", filepath.Join(f.dir, "missing.ctf")}, code: 1, msg: "batchprep inspect: open " + filepath.Join(f.dir, "missing.ctf") + ": no such file or directory"},
		{name: "read state to plan", args: []string{"plan", "--config", f.cfg, "--state-in", f.readState}, code: 1, msg: "this is a state of 'batchprep read', not of 'batchprep plan'"},
		{name: "plan state to read", args: []string{"read", f.ok, "--stream", "x:2", "--state-in", f.planState}, code: 1, msg: "this is a state of 'batchprep plan', not of 'batchprep read'"},
		{name: "read a state of the wrong type", args: []string{"read", f.ok, "--stream", "x:2", "--state-in", f.badState}, code: 1,
			msg: f.badState + `: bad state: line 1, column 13: field "version" holds a string, want an integer`},
		{name: "plan a state of the wrong type", args: []string{"plan", "--config", f.cfg, "--state-in", f.badState}, code: 1,
			msg: f.badState + `: bad state: line 1, column 13: field "version" holds a string, want an integer`},
		{name: "fatal bad sequence", args: []string{"read", f.badNum, "--stream", "x:2", "--format", "summary", "--randomize", "none"}, code: 1,
			msg: "bad sequences found: 1 (number=1); the last one is more than --max-errors 0 and stopped reading; 0 skipped", out: "skipped sequences: 0"},
		{name: "empty corpus", args: []string{"read", f.empty, "--stream", "x:2"}, code: 1, msg: f.empty + ": corpus has no sequences"},
		{name: "toml duplicate key", args: []string{"plan", "--config", f.dupTOML}, code: 1, msg: "line 4, column 1: Key 'num_epochs' has already been defined"},
		// 2: a state target that is not a regular file is refused and kept.
		{name: "state-out a fifo", args: []string{"read", f.ok, "--stream", "x:2", "--state-out", f.fifo}, code: 1, msg: f.fifo + " is a named pipe (FIFO), not a regular file"},
		// counts in the right number in plan's text
		{name: "plan text of one batch", args: []string{"plan", "--config", f.cfg, "--quiet", "--format", "text", "--max-batches", "1"}, code: 0, out: "total: 1 bucket, 1 batch, "},
		// 11, 12: no checkpoint_path, config in another directory.
		{name: "plan without checkpoint_path", args: []string{"plan", "--config", f.noCkpt, "--format", "summary", "--quiet"}, code: 0, out: "batches:"},
		// 13: a two-column edge list with an explicit relation column.
		{name: "two columns with --rel-col", args: []string{"import", "--config", f.cfg, "--rel-col", "1", f.twoCol}, code: 1, msg: "e.g. --rhs-col 1 for a two-column edge list"},
		// 14: inferred dimensions are lower bounds.
		{name: "inspect inferred", args: []string{"inspect", f.ok}, code: 0, out: "the dimensions are lower bounds"},
		// Usage mistakes are exit 2, for every command.
		{name: "read without corpus", args: []string{"read", "--stream", "x:2"}, code: 2, msg: "want exactly one CORPUS.ctf"},
		{name: "read bad stream", args: []string{"read", f.ok, "--stream", "x"}, code: 2, msg: "--stream x:"},
		{name: "inspect bad format", args: []string{"inspect", f.ok, "--format", "xml"}, code: 2, msg: "--format \"xml\""},
		{name: "import without files", args: []string{"import", "--config", f.cfg}, code: 2, msg: "no input FILE"},
		{name: "plan without config", args: []string{"plan"}, code: 2, msg: "--config is required"},
		{name: "verify nothing", args: []string{"verify"}, code: 2, msg: "nothing to verify"},
		{name: "verify a missing config", args: []string{"verify", "--config", filepath.Join(f.dir, "none.toml")}, code: 1, out: "problem  " + filepath.Join(f.dir, "none.toml")},
		{name: "verify a sound store", args: []string{"verify", "--config", f.cfg, "--plan-state", f.planState}, code: 0, out: "a plan state that fits the config and the store"},
		{name: "verify a read state as plan state", args: []string{"verify", "--plan-state", f.readState}, code: 1, out: "this is a state of 'batchprep read'"},
		{name: "version with an argument", args: []string{"version", "extra"}, code: 2, msg: "unexpected argument \"extra\""},
		// flag mistakes in batchprep's words, not the flag package's
		{name: "demo bad flag", args: []string{"demo", "--nope"}, code: 2, msg: "batchprep demo: unknown flag --nope\n"},
		{name: "read bad integer", args: []string{"read", f.ok, "--stream", "x:2", "--epochs", "abc"}, code: 2, msg: `batchprep read: --epochs "abc": want an integer` + "\n"},
		{name: "read negative seed", args: []string{"read", f.ok, "--stream", "x:2", "--seed", "-1"}, code: 2, msg: `--seed "-1": want an integer >= 0`},
		{name: "read huge integer", args: []string{"read", f.ok, "--stream", "x:2", "--epochs", "99999999999999999999"}, code: 2, msg: `--epochs "99999999999999999999": out of range; want an integer`},
		{name: "read bad boolean", args: []string{"read", f.ok, "--stream", "x:2", "--quiet=maybe"}, code: 2, msg: `--quiet "maybe": want true or false`},
		{name: "read flag without value", args: []string{"read", f.ok, "--stream"}, code: 2, msg: "batchprep read: --stream needs a value\n"},
		// verify takes --set; a --checkpoint that is not there is a problem
		{name: "verify a missing checkpoint", args: []string{"verify", "--checkpoint", filepath.Join(f.dir, "no-model")}, code: 1,
			msg: "batchprep verify: 1 problem found", out: "problem  --checkpoint " + filepath.Join(f.dir, "no-model") + ": no such directory"},
		{name: "verify a file as checkpoint", args: []string{"verify", "--checkpoint", f.ok}, code: 1, out: "problem  --checkpoint " + f.ok + ": not a directory"},
		{name: "verify with --set", args: []string{"verify", "--config", f.cfg, "--set", "entity_path=" + filepath.Join(f.dir, "nowhere")}, code: 1,
			out: "problem  " + filepath.Join(f.dir, "nowhere")},
		{name: "verify --set without =", args: []string{"verify", "--config", f.cfg, "--set", "entity_path"}, code: 2, msg: "--set entity_path: override must be key=value"},
		{name: "verify --set without --config", args: []string{"verify", "--read-state", f.readState, "--set", "seed=1"}, code: 2, msg: "--set needs --config"},
		// verify --index-cache defaults to read's chunking
		{name: "verify read's index cache", args: []string{"verify", "--index-cache", f.cached, "--stream", "x:2"}, code: 0, out: "index cache matches"},
		{name: "plan bad chunk size", args: []string{"read", f.ok, "--stream", "x:2", "--chunk-bytes", "12XB"}, code: 2, msg: `--chunk-bytes "12XB": want a byte count such as 1048576 or 32MiB`},
	}
	// A plan state at the end of the plan, for the "nothing to plan" case.
	if code, _, errOut := run(t, "plan", "--config", f.cfg, "--quiet", "--state-out", f.planState+".end"); code != 0 {
		t.Fatalf("plan to the end: %s", errOut)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var o, e bytes.Buffer
			var stdout = any(&o)
			if c.full {
				stdout = fullWriter{}
			}
			code := Main(c.args, strings.NewReader(""), stdout.(interface{ Write([]byte) (int, error) }), &e)
			if code != c.code || !strings.Contains(e.String(), c.msg) || !strings.Contains(o.String(), c.out) {
				t.Errorf("%v:\ncode %d (want %d)\nstderr %q\n(want %q)\nstdout %.300q\n(want %q)", c.args, code, c.code, e.String(), c.msg, o.String(), c.out)
			}
			for _, line := range strings.Split(strings.TrimSpace(e.String()), "\n") {
				if repeatedPrefix.MatchString(line) {
					t.Errorf("repeated prefix: %q", line)
				}
			}
			checkMessages(t, e.String())
			checkMessages(t, o.String())
		})
	}
	if fi, err := os.Lstat(f.fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO given to --state-out was replaced: %v %v", fi.Mode(), err)
	}
}

// Item 15: every command's --help shows examples (commands with inputs),
// a default for every flag, sizes in one form, and no SPEC references.
func TestHelpTexts(t *testing.T) {
	for _, name := range commandNames() {
		_, out, _ := run(t, name, "--help")
		if strings.Contains(out, "SPEC") {
			t.Errorf("%s --help cites SPEC", name)
		}
		if strings.Contains(out, "33554432") {
			t.Errorf("%s --help writes 32MiB as a byte count", name)
		}
		if name != "version" && name != "demo" && !strings.Contains(out, "Examples:\n  batchprep "+name) {
			t.Errorf("%s --help has no examples", name)
		}
		lines := strings.Split(out, "\n")
		for i, l := range lines {
			if strings.HasPrefix(l, "  --") && (i+1 >= len(lines) || !strings.Contains(lines[i+1], "default")) {
				t.Errorf("%s --help: flag %s shows no default", name, strings.TrimSpace(l))
			}
		}
	}
}
