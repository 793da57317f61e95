package edgestore

import (
	"bytes"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
)

// Problems checks every bucket file and every entity file as Verify does,
// but goes on past a bad file: it returns one error per bad file, each an
// *Error naming the file (nil when every file is sound). It is what
// `batchprep verify` lists.
func (s *Store) Problems() []error {
	var out []error
	for i, es := range s.sets {
		for idx := range es.man.Buckets {
			if _, err := es.verify(idx); err != nil {
				out = append(out, fmt.Errorf("edge set %d: %w", i, err))
			}
		}
	}
	names := make([]string, 0, len(s.entFiles))
	for n := range s.entFiles {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		data, err := s.readEntityFile(n)
		if err != nil {
			out = append(out, err)
			continue
		}
		if bytes.HasSuffix([]byte(n), []byte(".json")) {
			if _, err := parseNames(data); err != nil {
				out = append(out, corrupt(filepath.Join(s.entityPath, n), err))
			}
		} else if _, err := strconv.ParseInt(string(bytes.TrimSpace(data)), 10, 64); err != nil {
			out = append(out, corrupt(filepath.Join(s.entityPath, n), err))
		}
	}
	return out
}
