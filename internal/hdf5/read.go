package hdf5

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
)

// File is an HDF5 file open for reading.
type File struct {
	r    io.ReaderAt
	size uint64
	base uint64
	root uint64 // the root group's object header address
	c    io.Closer
}

// maxMessages bounds the messages of one object header, maxDepth the
// nesting of B-trees and groups: a damaged file cannot loop forever.
const (
	maxMessages = 1 << 16
	maxDepth    = 64
)

// Open reads the superblock of the HDF5 file in r, of the given size.
func Open(r io.ReaderAt, size int64) (*File, error) {
	f := &File{r: r, size: uint64(size)}
	// The superblock is at 0, 512, 1024, 2048, ... (after a user block).
	for at := uint64(0); at+8 <= f.size; at = max(512, 2*at) {
		b, err := f.read(at, 8)
		if err != nil {
			return nil, err
		}
		if bytes.Equal(b, signature) {
			return f, f.superblock(at)
		}
	}
	return nil, formatErr("no HDF5 signature")
}

// OpenFile opens the HDF5 file at path; Close closes it.
func OpenFile(path string) (*File, error) {
	fd, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := fd.Stat()
	if err != nil {
		fd.Close()
		return nil, err
	}
	f, err := Open(fd, st.Size())
	if err != nil {
		fd.Close()
		return nil, err
	}
	f.c = fd
	return f, nil
}

// Close closes the file OpenFile opened.
func (f *File) Close() error {
	if f.c != nil {
		return f.c.Close()
	}
	return nil
}

// read returns n bytes at file offset at (absolute), or an error if they
// are not all in the file.
func (f *File) read(at, n uint64) ([]byte, error) {
	if at > f.size || n > f.size-at {
		return nil, formatErr("%d bytes at offset %d are past the end of the file (%d bytes)", n, at, f.size)
	}
	b := make([]byte, n)
	if _, err := f.r.ReadAt(b, int64(at)); err != nil && !(err == io.EOF) {
		return nil, err
	}
	return b, nil
}

// readAddr reads n bytes at an address relative to the base address.
func (f *File) readAddr(addr, n uint64) ([]byte, error) {
	if addr == undef || addr > f.size {
		return nil, formatErr("address %#x is outside the file", addr)
	}
	return f.read(f.base+addr, n)
}

func (f *File) superblock(at uint64) error {
	b, err := f.read(at, min(f.size-at, 256))
	if err != nil {
		return err
	}
	if len(b) < 12 {
		return formatErr("superblock truncated")
	}
	p := parser{b: b, at: 8}
	ver := p.u8()
	switch ver {
	case 0, 1:
		p.skip(4) // free-space, root group, reserved, shared header versions
		if p.u8() != 8 || p.u8() != 8 {
			return unsupported("offsets and lengths other than 8 bytes")
		}
		p.skip(1 + 2 + 2 + 4)
		if ver == 1 {
			p.skip(4)
		}
		f.base = p.u64()
		p.skip(8)        // free space
		p.u64()          // end of file
		p.skip(8)        // driver info
		p.skip(8)        // root link name offset
		f.root = p.u64() // root object header
	case 2, 3:
		if p.u8() != 8 || p.u8() != 8 {
			return unsupported("offsets and lengths other than 8 bytes")
		}
		p.skip(1)
		f.base = p.u64()
		p.skip(8 + 8)
		f.root = p.u64()
		end := p.at
		sum := p.u32()
		if p.err == nil && lookup3(b[:end]) != sum {
			return formatErr("superblock checksum mismatch")
		}
	default:
		return unsupported("superblock version %d", ver)
	}
	if p.err != nil {
		return formatErr("superblock truncated")
	}
	if f.base != at && f.base != 0 {
		return unsupported("base address %d", f.base)
	}
	return nil
}

// parser reads little-endian fields from b, recording the first overrun.
type parser struct {
	b   []byte
	at  int
	err error
}

func (p *parser) need(n int) bool {
	if p.err != nil {
		return false
	}
	if n < 0 || p.at+n > len(p.b) || p.at+n < p.at {
		p.err = formatErr("a structure ends early")
		return false
	}
	return true
}

func (p *parser) u8() byte {
	if !p.need(1) {
		return 0
	}
	p.at++
	return p.b[p.at-1]
}

func (p *parser) u16() uint16 {
	if !p.need(2) {
		return 0
	}
	p.at += 2
	return binary.LittleEndian.Uint16(p.b[p.at-2:])
}

func (p *parser) u32() uint32 {
	if !p.need(4) {
		return 0
	}
	p.at += 4
	return binary.LittleEndian.Uint32(p.b[p.at-4:])
}

func (p *parser) u64() uint64 {
	if !p.need(8) {
		return 0
	}
	p.at += 8
	return binary.LittleEndian.Uint64(p.b[p.at-8:])
}

// uN reads an n-byte little-endian unsigned number (n <= 8).
func (p *parser) uN(n int) uint64 {
	if !p.need(n) {
		return 0
	}
	var v uint64
	for i := n - 1; i >= 0; i-- {
		v = v<<8 | uint64(p.b[p.at+i])
	}
	p.at += n
	return v
}

func (p *parser) bytes(n int) []byte {
	if !p.need(n) {
		return nil
	}
	p.at += n
	return p.b[p.at-n : p.at]
}

func (p *parser) skip(n int) { p.bytes(n) }
