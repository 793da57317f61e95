//go:build !linux

package mapped

import "os"

// File holds a file read into memory where files are not mapped here.
type File struct {
	data []byte
}

// Open reads the file at path.
func Open(path string, keepResident int64) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return &File{data: data}, nil
}

// Release does nothing: the file is on the heap.
func (m *File) Release(off, n int, evict bool) {}

// Evict does nothing: the file is on the heap.
func (m *File) Evict(off, n int) {}

// Close does nothing: the collector frees the file's copy.
func (m *File) Close() {}

// Resident is the whole copy.
func (m *File) Resident() int64 {
	if m == nil {
		return 0
	}
	return int64(len(m.data))
}

// Need does nothing: the file is on the heap.
func (m *File) Need(off, n int) {}

// Bytes returns the file.
func (m *File) Bytes() []byte { return m.data }
