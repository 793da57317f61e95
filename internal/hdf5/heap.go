package hdf5

import (
	"bytes"
	"math"
	"strings"
)

// varString reads a scalar variable-length string attribute: the element
// is a length and a global heap ID (collection address, object index).
func (f *File) varString(a *Attribute) (string, error) {
	n, _ := elements(a.Shape, 1, math.MaxUint32)
	if n != 1 || len(a.Data) < 16 {
		return "", unsupported("attribute %q: %d variable-length strings", a.Name, n)
	}
	p := parser{b: a.Data}
	size := uint64(p.u32())
	coll := p.u64()
	index := p.u32()
	head, err := f.readAddr(coll, 16)
	if err != nil {
		return "", err
	}
	if !bytes.Equal(head[:4], []byte("GCOL")) {
		return "", formatErr("attribute %q: no global heap at %#x", a.Name, coll)
	}
	q := parser{b: head, at: 8}
	total := q.u64()
	b, err := f.readAddr(coll, total)
	if err != nil {
		return "", err
	}
	h := parser{b: b, at: 16}
	for len(h.b)-h.at >= 16 {
		idx := h.u16()
		h.skip(6)
		osize := h.u64()
		if idx == 0 {
			break // free space
		}
		if osize > uint64(len(h.b)-h.at) {
			break
		}
		data := h.bytes(int(osize))
		h.skip(pad8(int(osize)) - int(osize))
		if uint32(idx) == index {
			if size > osize {
				return "", formatErr("attribute %q: string longer than its heap object", a.Name)
			}
			return strings.TrimRight(string(data[:size]), "\x00"), nil
		}
	}
	return "", formatErr("attribute %q: heap object %d not found", a.Name, index)
}
