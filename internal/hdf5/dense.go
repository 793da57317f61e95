package hdf5

import (
	"bytes"
	"math/bits"
)

// Dense storage: a group's links (or an object's attributes) kept as
// objects of a fractal heap, found through the records of a version 2
// B-tree (the name index). HDF5 switches to it past 8 links in a group
// that tracks creation order (PBG's model/relations with many relations)
// and for attributes past 64 KiB.

// fractalHeap is what reading managed objects needs of a heap header.
type fractalHeap struct {
	idLen       int
	width       int
	start       uint64 // starting block size
	maxDirect   uint64 // maximum direct block size
	offBytes    int    // bytes of a heap offset (block offsets and IDs)
	lenBytes    int    // bytes of a managed object's length in an ID
	root        uint64
	rootRows    int
	checksummed bool
	blocks      []heapBlock // direct blocks, found by walking the tree
}

type heapBlock struct{ off, addr, size uint64 }

// encSize is the bytes HDF5 uses to encode values up to v.
func encSize(v uint64) int {
	if v == 0 {
		return 1
	}
	return (bits.Len64(v)-1)/8 + 1
}

func (f *File) openHeap(addr uint64) (*fractalHeap, error) {
	b, err := f.readAddr(addr, 256)
	if err != nil {
		b, err = f.readAddr(addr, f.size-min(f.size, f.base+addr))
		if err != nil {
			return nil, err
		}
	}
	if !bytes.HasPrefix(b, []byte("FRHP")) {
		return nil, formatErr("no fractal heap at %#x", addr)
	}
	p := parser{b: b, at: 5}
	h := &fractalHeap{idLen: int(p.u16())}
	if p.u16() != 0 {
		return nil, unsupported("filtered fractal heaps")
	}
	flags := p.u8()
	h.checksummed = flags&2 != 0
	maxManaged := uint64(p.u32())
	p.skip(8 + 8 + 8 + 8 + 8 + 8 + 8 + 8 + 8 + 8 + 8 + 8)
	h.width = int(p.u16())
	h.start = p.u64()
	h.maxDirect = p.u64()
	maxHeapBits := int(p.u16())
	p.skip(2)
	h.root = p.u64()
	h.rootRows = int(p.u16())
	if p.err != nil {
		return nil, p.err
	}
	if h.width == 0 || h.width > 1<<12 || h.start == 0 || h.maxDirect < h.start || maxHeapBits == 0 || maxHeapBits > 64 ||
		bits.OnesCount64(h.start) != 1 || bits.OnesCount64(h.maxDirect) != 1 {
		return nil, formatErr("fractal heap at %#x has an impossible layout", addr)
	}
	h.offBytes = (maxHeapBits + 7) / 8
	h.lenBytes = min(encSize(h.maxDirect), encSize(maxManaged))
	if h.root != undef {
		if err := f.heapBlocks(h, h.root, h.rootRows, 0); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// rowSize is the block size of row r of the doubling table.
func (h *fractalHeap) rowSize(r int) uint64 {
	if r <= 1 {
		return h.start
	}
	return h.start << (r - 1)
}

// heapBlocks collects the direct blocks below the block at addr: a direct
// block when rows is 0, else an indirect block of that many rows.
func (f *File) heapBlocks(h *fractalHeap, addr uint64, rows, depth int) error {
	if depth > maxDepth || len(h.blocks) > maxMessages {
		return formatErr("fractal heap too deep")
	}
	hdr := 4 + 1 + 8 + h.offBytes
	if rows == 0 {
		b, err := f.readAddr(addr, uint64(hdr))
		if err != nil {
			return err
		}
		if !bytes.HasPrefix(b, []byte("FHDB")) {
			return formatErr("no fractal heap direct block at %#x", addr)
		}
		p := parser{b: b, at: 13}
		off := p.uN(h.offBytes)
		size := h.start
		if len(h.blocks) > 0 || depth > 0 {
			size = 0 // set by the caller, which knows the row
		}
		h.blocks = append(h.blocks, heapBlock{off: off, addr: addr, size: size})
		return nil
	}
	maxDirectRows := bits.Len64(h.maxDirect) - bits.Len64(h.start) + 2
	n := rows * h.width
	b, err := f.readAddr(addr, uint64(hdr+8*n))
	if err != nil {
		return err
	}
	if !bytes.HasPrefix(b, []byte("FHIB")) {
		return formatErr("no fractal heap indirect block at %#x", addr)
	}
	p := parser{b: b, at: hdr}
	for i := range n {
		child := p.u64()
		if child == undef {
			continue
		}
		row := i / h.width
		size := h.rowSize(row)
		if row < maxDirectRows {
			before := len(h.blocks)
			if err := f.heapBlocks(h, child, 0, depth+1); err != nil {
				return err
			}
			h.blocks[before].size = size
			continue
		}
		childRows := bits.Len64(size) - bits.Len64(h.start*uint64(h.width)) + 1
		if childRows <= 0 {
			return formatErr("fractal heap indirect block at %#x: bad row", addr)
		}
		if err := f.heapBlocks(h, child, childRows, depth+1); err != nil {
			return err
		}
	}
	return p.err
}

// object returns the heap object an ID names (managed or tiny).
func (f *File) heapObject(h *fractalHeap, id []byte) ([]byte, error) {
	if len(id) < 1 {
		return nil, formatErr("empty heap ID")
	}
	switch id[0] >> 4 & 3 {
	case 0:
		p := parser{b: id, at: 1}
		off := p.uN(h.offBytes)
		n := p.uN(h.lenBytes)
		if p.err != nil {
			return nil, p.err
		}
		for _, bl := range h.blocks {
			if off >= bl.off && off-bl.off < bl.size && n <= bl.size-(off-bl.off) {
				return f.readAddr(bl.addr+(off-bl.off), n)
			}
		}
		return nil, formatErr("heap offset %d is in no direct block", off)
	case 2:
		n := int(id[0]&0x0f) + 1
		if 1+n > len(id) {
			return nil, formatErr("tiny heap object longer than its ID")
		}
		return id[1 : 1+n], nil
	}
	return nil, unsupported("huge fractal heap objects")
}

// btree2Records returns every record of the version 2 B-tree at addr.
func (f *File) btree2Records(addr uint64) ([][]byte, error) {
	b, err := f.readAddr(addr, 4+1+1+4+2+2+1+1+8+2+8+4)
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(b, []byte("BTHD")) {
		return nil, formatErr("no v2 B-tree at %#x", addr)
	}
	p := parser{b: b, at: 6}
	nodeSize := uint64(p.u32())
	recSize := int(p.u16())
	depth := int(p.u16())
	p.skip(2)
	root := p.u64()
	rootN := int(p.u16())
	if p.err != nil || recSize == 0 || nodeSize < 16 || nodeSize > 1<<24 || depth > maxDepth {
		return nil, formatErr("v2 B-tree at %#x has an impossible layout", addr)
	}
	// The width of the record counts in node pointers (HDF5's rule).
	const prefix = 10
	leafMax := (nodeSize - prefix) / uint64(recSize)
	nrecSize := encSize(leafMax)
	cum := []uint64{leafMax}
	cumSize := []int{0}
	for d := 1; d <= depth; d++ {
		ptr := 8 + nrecSize
		if d > 1 {
			ptr += cumSize[d-1]
		}
		if nodeSize < prefix+uint64(ptr) {
			return nil, formatErr("v2 B-tree at %#x: nodes too small", addr)
		}
		max := (nodeSize - prefix - uint64(ptr)) / uint64(recSize+ptr)
		cum = append(cum, (max+1)*cum[d-1]+max)
		cumSize = append(cumSize, encSize(cum[d]))
	}
	var out [][]byte
	var walk func(addr uint64, n, d int) error
	walk = func(addr uint64, n, d int) error {
		if len(out) > maxMessages {
			return formatErr("v2 B-tree too large")
		}
		b, err := f.readAddr(addr, nodeSize)
		if err != nil {
			return err
		}
		sig := "BTLF"
		if d > 0 {
			sig = "BTIN"
		}
		if !bytes.HasPrefix(b, []byte(sig)) {
			return formatErr("no v2 B-tree node at %#x", addr)
		}
		p := parser{b: b, at: 6}
		for range n {
			out = append(out, p.bytes(recSize))
		}
		if d == 0 {
			return p.err
		}
		for range n + 1 {
			child := p.u64()
			cn := int(p.uN(nrecSize))
			if d > 1 {
				p.skip(cumSize[d-1])
			}
			if p.err != nil {
				return p.err
			}
			if err := walk(child, cn, d-1); err != nil {
				return err
			}
		}
		return nil
	}
	if root == undef || rootN == 0 {
		return nil, nil
	}
	if err := walk(root, rootN, depth); err != nil {
		return nil, err
	}
	return out, nil
}

// denseObjects returns the heap objects a name index names, the heap ID
// at offset idAt of each record.
func (f *File) denseObjects(heapAddr, treeAddr uint64, idAt int) ([][]byte, error) {
	h, err := f.openHeap(heapAddr)
	if err != nil {
		return nil, err
	}
	recs, err := f.btree2Records(treeAddr)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for _, r := range recs {
		if idAt+h.idLen > len(r) {
			return nil, formatErr("B-tree record shorter than a heap ID")
		}
		obj, err := f.heapObject(h, r[idAt:idAt+h.idLen])
		if err != nil {
			return nil, err
		}
		out = append(out, obj)
	}
	return out, nil
}
