package mapped

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
)

// Spill writes tables of uint32, one temporary file each, a chunk at a
// time, so that the pass producing them holds only the chunk's; WriteTables
// then lays them out, each padded to a page, as Tables reads them.
type Spill struct {
	Dir   string
	files []*os.File
	w     []*bufio.Writer
	buf   []byte
	err   error
}

// NewSpill creates the temporary files of a spill of k tables in dir.
func NewSpill(dir string, k int) (*Spill, error) {
	s := &Spill{Dir: dir}
	for range k {
		f, err := os.CreateTemp(dir, ".batchprep-index-*")
		if err != nil {
			s.Remove()
			return nil, fmt.Errorf("index spill: %w", err)
		}
		s.files, s.w = append(s.files, f), append(s.w, bufio.NewWriterSize(f, 256<<10))
	}
	return s, nil
}

// Write appends one slice to each table (the first k of tables).
func (s *Spill) Write(tables ...[]uint32) {
	for k, w := range s.w {
		if s.err != nil {
			return
		}
		s.buf = s.buf[:0]
		for _, v := range tables[k] {
			s.buf = binary.LittleEndian.AppendUint32(s.buf, v)
		}
		if _, err := w.Write(s.buf); err != nil {
			s.err = fmt.Errorf("index spill: %w", err)
		}
	}
}

// Flush ends the writes; the first error of any write is returned.
func (s *Spill) Flush() error {
	for _, w := range s.w {
		if s.err == nil {
			if err := w.Flush(); err != nil {
				s.err = fmt.Errorf("index spill: %w", err)
			}
		}
	}
	return s.err
}

// Table returns table k from its start, for reading (after Flush).
func (s *Spill) Table(k int) (io.Reader, error) {
	if _, err := s.files[k].Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("index spill: %w", err)
	}
	return s.files[k], nil
}

// WriteTables copies the tables of n entries each to w, each followed by
// zeros to a multiple of PageSize (after Flush).
func (s *Spill) WriteTables(w io.Writer, n int) error {
	for k := range s.files {
		r, err := s.Table(k)
		if err != nil {
			return err
		}
		if _, err := io.Copy(w, r); err != nil {
			return err
		}
		if _, err := w.Write(make([]byte, Pad(4*n))); err != nil {
			return err
		}
	}
	return nil
}

// Remove closes and deletes the temporary files.
func (s *Spill) Remove() {
	for _, f := range s.files {
		f.Close()
		os.Remove(f.Name())
	}
	s.files, s.w = nil, nil
}
