// Package cli implements the batchprep command line: one file per
// subcommand, each a function from arguments to an error. Main maps errors to
// exit codes: 0 ok, 1 data or runtime error, 2 usage error, 130 / 143 when
// SIGINT / SIGTERM stopped the run (128 + the signal number).
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
)

// Env is what a subcommand may touch: its streams and a context that is
// cancelled on SIGINT/SIGTERM so long runs stop cleanly (writing no partial
// files).
type Env struct {
	Ctx    context.Context
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

type command struct {
	name    string
	summary string
	run     func(env *Env, args []string) error
}

var commands = []command{
	{"demo", "run the main job on built-in data and explain what happens", runDemo},
	{"inspect", "index a CTF or Parquet corpus and report sequences, samples, chunks, warnings and errors", runInspect},
	{"read", "read minibatches from a CTF or Parquet corpus on the nominal timeline", runRead},
	{"convert", "convert a sequence corpus from CTF to Parquet or back", runConvert},
	{"import", "import edge lists into partitioned bucket files", runImport},
	{"plan", "print the batch schedule of a graph config without training", runPlan},
	{"train", "train graph embeddings on the planned batches, checkpointing every bucket", runTrain},
	{"eval", "filtered link-prediction ranking of test edges with a trained checkpoint", runEval},
	{"export", "export trained embeddings with entity names as TSV or binary", runExport},
	{"verify", "check a store, a state file or an index cache for damage, listing every problem", runVerify},
	{"serve", "serve minibatches and graph batches to trainers over gRPC", runServe},
	{"coordinator", "run a single-node etcd for distributed plans and training", runCoordinator},
	{"version", "print the version", runVersion},
}

// Version is the batchprep release.
const Version = "0.1.0-dev"

// UsageError marks a command-line mistake (exit code 2).
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, a ...any) error { return &UsageError{fmt.Sprintf(format, a...)} }

// Main runs batchprep with args (without the program name) and returns the
// process exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := notifySignals(stderr)
	defer stop()
	out := &outputWriter{w: stdout}
	env := &Env{Ctx: ctx, Stdin: stdin, Stdout: out, Stderr: stderr}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		if len(args) > 1 {
			return Main([]string{args[1], "--help"}, stdin, stdout, stderr)
		}
		printUsage(stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands {
		if c.name == args[0] {
			err := c.run(env, args[1:])
			if err == nil && out.err != nil {
				err = fmt.Errorf("writing output: %w", out.err)
			}
			return exitCode(env, c.name, err)
		}
	}
	fmt.Fprintf(stderr, "batchprep: unknown command %q\n\n", args[0])
	printUsage(stderr)
	return 2
}

// exitCode prints err on stderr with one prefix ("batchprep NAME: ") and
// returns the exit status: 0 ok, 1 a data or runtime error, 2 a usage
// error, 128+N when signal N (SIGINT 130, SIGTERM 143) stopped the run.
func exitCode(env *Env, name string, err error) int {
	stderr := env.Stderr
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	var ue *UsageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "batchprep %s: %s\nRun 'batchprep %s --help' for usage.\n", name, oneprefix(name, ue.Msg), name)
		return 2
	}
	if in := interruption(env.Ctx, err); in != nil {
		fmt.Fprintf(stderr, "batchprep %s: %v; stopped cleanly\n", name, in)
		return in.exitCode()
	}
	if errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "batchprep %s: interrupted\n", name)
		return 1
	}
	fmt.Fprintf(stderr, "batchprep %s: %s\n", name, oneprefix(name, err.Error()))
	return 1
}

func printUsage(w io.Writer) {
	fmt.Fprintf(w, "batchprep %s: deterministic, resumable minibatch preparation\n\nUsage: batchprep COMMAND [flags] [args]\n\nCommands:\n", Version)
	for _, c := range commands {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nRun 'batchprep COMMAND --help' for a command's flags.\n")
}

func runVersion(env *Env, args []string) error {
	fs := newFlagSet(env, "version", "", "Print the batchprep version.")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, "batchprep", Version)
	return nil
}

// newFlagSet makes a flag set whose --help prints the usage line, the
// description and the flags to stdout. A bad flag prints only the error (on
// stderr, through exitCode), so stdout stays clean for machine readers.
func newFlagSet(env *Env, name, argsUsage, description string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {} // the flag package calls it on every error; help is printed by parseArgs
	usagePrinters.Store(fs, func() {
		fmt.Fprintf(env.Stdout, "Usage: batchprep %s [flags] %s\n\n%s\n\nFlags:\n", name, argsUsage, strings.TrimSpace(description))
		printFlags(env.Stdout, fs)
	})
	return fs
}

// usagePrinters maps each flag set made by newFlagSet to its help printer.
var usagePrinters sync.Map

// parseFlags is parseArgs for a command that takes no positional arguments.
func parseFlags(fs *flag.FlagSet, args []string) error {
	pos, err := parseArgs(fs, args)
	if err == nil && len(pos) > 0 {
		err = usagef("unexpected argument %q", pos[0])
	}
	return err
}

// parseArgs parses flags that may come before, between or after positional
// arguments ("read FILE --stream x:3" and "read --stream x:3 FILE" both
// work); "--" ends flag parsing. It returns the positional arguments.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	defer usagePrinters.Delete(fs)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				if p, ok := usagePrinters.Load(fs); ok {
					p.(func())()
				}
				return nil, err
			}
			return nil, &UsageError{flagError(fs, err)}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// commandNames lists the subcommands (for tests).
func commandNames() []string {
	var n []string
	for _, c := range commands {
		n = append(n, c.name)
	}
	sort.Strings(n)
	return n
}
