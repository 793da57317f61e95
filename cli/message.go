package cli

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// libraryPrefixes are the package prefixes library errors carry ("ctf: ",
// "config: ", ...). On the command line the message gets one prefix, the
// command's ("batchprep read: "), so these are dropped where they start the
// message or follow another prefix.
var libraryPrefixes = []string{"ctf", "corpus", "source", "randomize", "timeline", "config",
	"edgestore", "importer", "plan", "bucket", "graph", "atomicfile", "train", "eval", "export", "serve", "coord", "pbg", "parquet"}

// oneprefix returns msg without the package prefixes and without a
// repetition of the command's own name: "inspect: ctf: open x: ..." becomes
// "open x: ..." under "batchprep inspect: ".
func oneprefix(cmd, msg string) string {
	drop := append([]string{cmd}, libraryPrefixes...)
	for changed := true; changed; {
		changed = false
		for _, p := range drop {
			p += ": "
			if strings.HasPrefix(msg, p) {
				msg, changed = msg[len(p):], true
			}
			if i := strings.Index(msg, ": "+p); i >= 0 {
				msg, changed = msg[:i+2]+msg[i+2+len(p):], true
			}
		}
	}
	return msg
}

// outputWriter remembers the first error of writing stdout, so that a
// command whose output was lost (a full disk, /dev/full, a closed pipe)
// exits 1 even when it ignored the error itself.
type outputWriter struct {
	w   io.Writer
	err error
}

func (o *outputWriter) Write(p []byte) (int, error) {
	if o.err != nil {
		return 0, o.err
	}
	n, err := o.w.Write(p)
	if err != nil {
		o.err = err
	}
	return n, err
}

// printFlags writes every flag of fs with its default, once, in the form
// the flag accepts: "(default: X)" unless the usage text already says
// what the default is.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(fl *flag.Flag) {
		name, usage := flag.UnquoteUsage(fl)
		line := "  --" + fl.Name
		if name != "" {
			line += " " + name
		}
		def := fl.DefValue
		if d, ok := fl.Value.(interface{ defaultText() string }); ok {
			def = d.defaultText()
		}
		if def == "" {
			def = "none"
		}
		if !strings.Contains(usage, "default") {
			usage += fmt.Sprintf(" (default: %s)", def)
		}
		fmt.Fprintf(w, "%s\n      %s\n", line, strings.ReplaceAll(usage, "\n", "\n      "))
	})
}
