package importer

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
)

// maxDetectLine bounds the line FirstLineFields reads; a longer first edge
// line is reported rather than buffered whole.
const maxDetectLine = 1 << 20

// FirstLineFields returns the number of fields of the first edge line of
// the file at path (lines that are empty or start with '#' are skipped, as
// Import skips them), split by d; 0 when the file has no edge line. The
// command line uses it to pick the rhs column of a two-column edge list.
func FirstLineFields(path string, d Delimiter) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("importer: %w", err)
	}
	defer f.Close()
	return FirstLineFieldsOf(f, path, d)
}

// FirstLineFieldsOf is FirstLineFields of the edge file in (which path
// names in messages), read from its start.
func FirstLineFieldsOf(in Input, path string, d Delimiter) (int, error) {
	r := sequential(in)
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxDetectLine)
	p := &parser{opts: &Options{Delimiter: d}}
	for sc.Scan() {
		line := bytes.TrimRight(sc.Bytes(), "\r")
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		if n := p.split(nil, line, nil); n > 0 {
			return n, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("importer: %s: %w", path, err)
	}
	return 0, nil
}
