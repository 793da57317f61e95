//go:build !linux

package ctf

import "os"

// mapping holds an index file read into memory where files are not
// mapped.
type mapping struct {
	data []byte
}

// mapFile reads the file at path.
func mapFile(path string) (*mapping, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return &mapping{data: data}, nil
}

// release does nothing: the file is on the heap.
func (m *mapping) release(off, n int, evict bool) {}

// close does nothing: the collector frees the file's copy.
func (m *mapping) close() {}

// resident is the whole copy.
func (m *mapping) resident() int64 {
	if m == nil {
		return 0
	}
	return int64(len(m.data))
}

// need does nothing: the file is on the heap.
func (m *mapping) need(off, n int) {}
