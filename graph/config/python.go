package config

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// DefaultPython is the interpreter that evaluates a Python config, and
// DefaultPythonTimeout how long it may take, unless LoadOptions (or
// BATCHPREP_PYTHON and BATCHPREP_PYTHON_TIMEOUT, see OptionsFromEnv) say
// otherwise.
const (
	DefaultPython        = "/usr/bin/python3"
	DefaultPythonTimeout = 30 * time.Second
)

// LoadOptions says how LoadWith evaluates a Python config (a .py file whose
// get_torchbiggraph_config() returns the config dict, as PBG's are).
// Zero values take the defaults above.
type LoadOptions struct {
	Python        string        // interpreter; a bare name is looked up in PATH
	PythonTimeout time.Duration // the whole evaluation, file and function
}

// OptionsFromEnv reads LoadOptions from the environment through getenv
// (os.Getenv): BATCHPREP_PYTHON names the interpreter, and
// BATCHPREP_PYTHON_TIMEOUT the time limit, a duration such as 90s or 2m or
// a number of seconds. An unreadable timeout is an *Error naming the
// variable.
func OptionsFromEnv(getenv func(string) string) (LoadOptions, error) {
	o := LoadOptions{Python: getenv("BATCHPREP_PYTHON")}
	if s := strings.TrimSpace(getenv("BATCHPREP_PYTHON_TIMEOUT")); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			var secs float64
			if secs, err = strconv.ParseFloat(s, 64); err == nil {
				d = time.Duration(secs * float64(time.Second))
			}
		}
		if err != nil || d <= 0 {
			return o, &Error{Msg: fmt.Sprintf("BATCHPREP_PYTHON_TIMEOUT=%q: want a positive duration such as 90s or 2m, or a number of seconds", s)}
		}
		o.PythonTimeout = d
	}
	return o, nil
}

// pyExitMsg is the loader's exit status for a config it refuses with a
// one-line message on the last line of stderr (the file's own exceptions
// exit 1 with their traceback).
const pyExitMsg = 3

// pyLoader runs in the interpreter (with -I, so neither PYTHONPATH, the
// user's site directory nor the working directory are searched): it runs
// the file named by its first argument, calls get_torchbiggraph_config()
// and writes the dict as JSON on stdout. Whatever the file prints goes to
// stderr. Values JSON cannot carry are refused naming their key.
const pyLoader = `
import json, math, runpy, sys, traceback
path = sys.argv[1]
sys.argv = [path]
out, sys.stdout = sys.stdout, sys.stderr

def fail(msg):
    sys.stderr.write("\n" + msg + "\n")
    sys.exit(3)

def run(f, *args):
    try:
        return f(*args)
    except SystemExit as e:
        fail("the file called sys.exit(%r)" % (e.code,))
    except BaseException as e:
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != path:
            tb = tb.tb_next
        if tb is None:
            lines = traceback.format_exception_only(type(e), e)
        else:
            lines = ["Traceback (most recent call last):\n"] + traceback.format_tb(tb) + traceback.format_exception_only(type(e), e)
        sys.stderr.write("".join(lines))
        sys.exit(1)

def plain(v, where):
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return int(v)
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            fail("%s: %r is not a finite number" % (where, v))
        return float(v)
    if isinstance(v, dict):
        d = {}
        for k, x in v.items():
            if not isinstance(k, str):
                fail("%s: the key %r is not a string" % (where or "the config dict", k))
            d[k] = plain(x, where + "." + k if where else k)
        return d
    if isinstance(v, (list, tuple)):
        return [plain(x, "%s[%d]" % (where, i)) for i, x in enumerate(v)]
    fail("%s: a value of type %s has no JSON form (want None, bool, int, float, str, list, tuple or dict)" % (where, type(v).__name__))

ns = run(runpy.run_path, path)
fn = ns.get("get_torchbiggraph_config")
if fn is None:
    fail("defines no function get_torchbiggraph_config(), which a PBG Python config returns its dict from")
if not callable(fn):
    fail("get_torchbiggraph_config is a %s, not a function" % type(fn).__name__)
cfg = run(fn)
if not isinstance(cfg, dict):
    fail("get_torchbiggraph_config() returned a %s, not a dict" % type(cfg).__name__)
json.dump(plain(cfg, ""), out)
out.flush()
`

// maxPythonOutput bounds what is kept of the interpreter's stdout (the
// JSON) and stderr (the traceback, its tail).
const (
	maxPythonJSON   = 16 << 20
	maxPythonStderr = 16 << 10
)

// loadPython evaluates the Python config at path (see LoadWith) and
// returns its dict as JSON.
func loadPython(ctx context.Context, path string, opts LoadOptions) ([]byte, error) {
	python, limit := opts.Python, opts.PythonTimeout
	if python == "" {
		python = DefaultPython
	}
	if limit <= 0 {
		limit = DefaultPythonTimeout
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &Error{File: path, Msg: err.Error(), Err: err}
	}
	tctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := exec.CommandContext(tctx, python, "-I", "-c", pyLoader, abs)
	var stdout limitedBuffer
	stdout.max = maxPythonJSON
	var stderr tailBuffer
	stderr.max = maxPythonStderr
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = time.Second // a process the file started may hold the pipes
	err = cmd.Run()
	if err == nil {
		if stdout.over {
			return nil, &Error{File: path, Msg: fmt.Sprintf("its config dict is larger than %d bytes as JSON: not a graph config", maxPythonJSON)}
		}
		return stdout.Bytes(), nil
	}
	switch {
	case ctx.Err() != nil:
		return nil, &Error{File: path, Msg: "interrupted while Python evaluated it", Err: ctx.Err()}
	case tctx.Err() != nil:
		return nil, &Error{File: path, Msg: fmt.Sprintf("Python did not finish evaluating it within %v and was stopped (BATCHPREP_PYTHON_TIMEOUT sets the limit)", limit), Err: tctx.Err()}
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, exec.ErrNotFound):
		return nil, &Error{File: path, Msg: fmt.Sprintf("a Python config needs a Python interpreter, and %s is not there: install python3, or set BATCHPREP_PYTHON to one", python), Err: err}
	case errors.Is(err, fs.ErrPermission):
		return nil, &Error{File: path, Msg: fmt.Sprintf("a Python config needs a Python interpreter, and %s may not be run (permission denied): set BATCHPREP_PYTHON to one", python), Err: err}
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		text := strings.TrimRight(stderr.String(), "\n")
		switch ee.ExitCode() {
		case pyExitMsg:
			return nil, &Error{File: path, Msg: text[strings.LastIndexByte(text, '\n')+1:]}
		case 1:
			return nil, &Error{File: path, Msg: "evaluating it with Python failed:\n" + indent(text)}
		}
		return nil, &Error{File: path, Msg: fmt.Sprintf("%s exited with %v while evaluating it:\n%s", python, ee.ProcessState, indent(text)), Err: err}
	}
	return nil, &Error{File: path, Msg: fmt.Sprintf("cannot run %s: %v", python, err), Err: err}
}

// indent prefixes every line of s with two spaces, so a traceback stands
// apart from the message around it.
func indent(s string) string {
	if s == "" {
		return "  (nothing on stderr)"
	}
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}

// limitedBuffer keeps the first max bytes written and notes the excess.
type limitedBuffer struct {
	bytes.Buffer
	max  int
	over bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); len(p) > room {
		b.over = true
		b.Buffer.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return b.Buffer.Write(p)
}

// tailBuffer keeps the last max bytes written (a traceback's end is what
// names the error), starting at a line when it had to cut.
type tailBuffer struct {
	buf []byte
	max int
	cut bool
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.buf = append(b.buf, p...)
	if len(b.buf) > 2*b.max {
		b.buf = append(b.buf[:0], b.buf[len(b.buf)-b.max:]...)
		b.cut = true
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	s := b.buf
	if len(s) > b.max {
		s, b.cut = s[len(s)-b.max:], true
	}
	if b.cut {
		if i := bytes.IndexByte(s, '\n'); i >= 0 {
			s = s[i+1:]
		}
		return "...\n" + string(s)
	}
	return string(s)
}
