package importer

import (
	"context"
	"fmt"
	"strings"

	"github.com/batchprep/batchprep/graph/edgestore"
	"github.com/batchprep/batchprep/internal/objstore"
)

// Delimiter separates the fields of an edge line.
type Delimiter int

const (
	Tab   Delimiter = iota // one tab between fields (the default)
	Comma                  // one comma between fields; quoting is not supported
	Space                  // any run of spaces and tabs; leading and trailing blanks ignored
)

// ParseDelimiter reads "tab", "comma" or "space".
func ParseDelimiter(s string) (Delimiter, error) {
	switch strings.ToLower(s) {
	case "tab", "tsv":
		return Tab, nil
	case "comma", "csv":
		return Comma, nil
	case "space", "whitespace":
		return Space, nil
	}
	return 0, fmt.Errorf("importer: delimiter %q is not one of tab, comma, space", s)
}

func (d Delimiter) String() string {
	switch d {
	case Tab:
		return "tab"
	case Comma:
		return "comma"
	case Space:
		return "space"
	}
	return fmt.Sprintf("Delimiter(%d)", int(d))
}

// Options choose the columns and the error budget of an import.
type Options struct {
	LhsCol, RhsCol int // 0-based field indices; defaults 0 and 2
	RelCol         int // -1: no relation column, every edge has relation 0
	WeightCol      int // -1: no weights
	// LhsName, RhsName, RelName and WeightName choose Parquet columns by
	// name; a non-empty name takes the place of the index beside it. Text
	// files have no column names: a name set makes a text file an error.
	LhsName, RhsName, RelName, WeightName string
	// Format is the input format: FormatAuto (the default) detects it per
	// file (DetectFormat).
	Format    Format
	Delimiter Delimiter
	// MaxErrors is how many bad lines may be skipped (reported) before the
	// import fails; 0 (the default) makes the first bad line fatal.
	MaxErrors int
	// Objects configures the reads of edge files named s3://BUCKET/KEY:
	// requests in flight, retries and the local cache (the zero value
	// means objstore's defaults). It does not change what is imported.
	Objects objstore.Options
	// Open, when set, opens each edge file in place of OpenInput (a
	// command that keeps its objects open from one step to the next, so
	// that each is looked up once and read in one version). The importer
	// closes what it opens.
	Open func(ctx context.Context, path string) (Input, error)
	// Progress, when set, is called from the importing goroutine now and
	// then (after each 128 KiB block parsed and after each bucket written).
	Progress func(Progress)

	hook   func(step string) error // tests: injected failures (edgestore.WriteOptions.Hook)
	noSync bool                    // tests and generated benchmark data: no fsync
	// Tests of the Parquet pipeline: decoders at once (0: GOMAXPROCS), and
	// a hook called as pass A starts row group g ("start"), has its first
	// batch ready ("filled"), and as pass B is done with it ("flushed").
	pqWorkers int
	pqHook    func(g int, step string)
}

// DefaultOptions are SPEC B1.2's defaults: lhs column 0, rhs column 2, no
// relation or weight column, tab-separated, no bad line allowed.
func DefaultOptions() Options {
	return Options{LhsCol: 0, RhsCol: 2, RelCol: -1, WeightCol: -1, Delimiter: Tab}
}

// Validate checks the column choices.
func (o *Options) Validate() error {
	if o.LhsCol < 0 || o.RhsCol < 0 {
		return fmt.Errorf("importer: lhs and rhs columns must be >= 0 (got %d, %d)", o.LhsCol, o.RhsCol)
	}
	if o.RelCol < -1 || o.WeightCol < -1 {
		return fmt.Errorf("importer: relation and weight columns must be >= 0, or -1 for none")
	}
	if o.Format < FormatAuto || o.Format > FormatParquet {
		return fmt.Errorf("importer: unknown format %d", o.Format)
	}
	if o.Format == FormatText && o.names() {
		return fmt.Errorf("importer: text edge lists have no column names: choose columns by 0-based index")
	}
	names := map[string]string{}
	for _, c := range []struct{ role, name string }{{"lhs", o.LhsName}, {"rhs", o.RhsName}, {"rel", o.RelName}, {"weight", o.WeightName}} {
		if c.name == "" {
			continue
		}
		if other, dup := names[c.name]; dup {
			return fmt.Errorf("importer: the %s and %s columns are both column %q", other, c.role, c.name)
		}
		names[c.name] = c.role
	}
	cols := map[int]string{}
	for _, c := range []struct {
		name string
		col  int
	}{{"lhs", o.LhsCol}, {"rhs", o.RhsCol}, {"rel", o.RelCol}, {"weight", o.WeightCol}} {
		if c.col < 0 || o.nameOf(c.name) != "" {
			continue
		}
		if other, dup := cols[c.col]; dup {
			return fmt.Errorf("importer: the %s and %s columns are both column %d", other, c.name, c.col)
		}
		cols[c.col] = c.name
	}
	if o.MaxErrors < 0 {
		return fmt.Errorf("importer: max errors must be >= 0, got %d", o.MaxErrors)
	}
	if o.Delimiter < Tab || o.Delimiter > Space {
		return fmt.Errorf("importer: unknown delimiter %d", o.Delimiter)
	}
	return nil
}

// names tells whether any column is chosen by name.
func (o *Options) names() bool {
	return o.LhsName != "" || o.RhsName != "" || o.RelName != "" || o.WeightName != ""
}

// nameOf returns the column name chosen for role (lhs, rhs, rel, weight).
func (o *Options) nameOf(role string) string {
	switch role {
	case "lhs":
		return o.LhsName
	case "rhs":
		return o.RhsName
	case "rel":
		return o.RelName
	case "weight":
		return o.WeightName
	}
	return ""
}

// hasWeight tells whether a weight column is chosen.
func (o *Options) hasWeight() bool { return o.WeightCol >= 0 || o.WeightName != "" }

// hasRel tells whether a relation column is chosen.
func (o *Options) hasRel() bool { return o.RelCol >= 0 || o.RelName != "" }

// needed is the number of fields a line must have at least.
func (o *Options) needed() int {
	return max(o.LhsCol, o.RhsCol, o.RelCol, o.WeightCol) + 1
}

// Progress reports how far an import is.
type Progress struct {
	Phase      string // "parse" or "write"
	File       int    // index of the input file (edge set)
	Path       string // its path
	Bytes      int64  // parse: bytes of this file read so far
	TotalBytes int64  // parse: size of this file
	Edges      int64  // edges parsed (parse) or written (write) so far, all files
	Buckets    int    // write: buckets written so far, all edge sets
}

// sourceColumns is the record of how a text file was read, kept in its
// edge set's manifest so that eval reads more edges the same way: none
// for a Parquet file or for columns chosen by name.
func (o *Options) sourceColumns(parquet bool) (edgestore.SourceColumns, bool) {
	if parquet || o.LhsName != "" || o.RelName != "" || o.RhsName != "" {
		return edgestore.SourceColumns{}, false
	}
	return edgestore.SourceColumns{Lhs: o.LhsCol, Rel: o.RelCol, Rhs: o.RhsCol, Delimiter: o.Delimiter.String()}, true
}
