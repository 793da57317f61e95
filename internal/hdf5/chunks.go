package hdf5

import "bytes"

// readChunks copies the chunks of a version 1 B-tree (unfiltered chunked
// layout) into out, a row-major array of shape with elements of size
// bytes; chunks never written stay zero.
func (f *File) readChunks(name string, tree uint64, shape, chunk []uint64, size int, out []byte) error {
	rank := len(shape)
	keySize := uint64(8 + 8*(rank+1))
	chunkBytes := uint64(size)
	for _, c := range chunk {
		chunkBytes *= c
		if chunkBytes > f.size {
			return formatErr("%s: chunks larger than the file", name)
		}
	}
	// A chunk per position of the chunk grid at most: a damaged tree
	// cannot make the copy loop run longer than the data is large.
	grid := uint64(1)
	for d := range shape {
		grid *= (shape[d] + chunk[d] - 1) / chunk[d]
	}
	placed := uint64(0)
	visited := map[uint64]bool{}
	var walk func(addr uint64, depth int) error
	walk = func(addr uint64, depth int) error {
		if depth > maxDepth || visited[addr] {
			return formatErr("%s: chunk B-tree loops", name)
		}
		visited[addr] = true
		head, err := f.readAddr(addr, 24)
		if err != nil {
			return err
		}
		if !bytes.Equal(head[:4], []byte("TREE")) || head[4] != 1 {
			return formatErr("%s: no chunk B-tree node at %#x", name, addr)
		}
		level := head[5]
		used := uint64(head[6]) | uint64(head[7])<<8
		b, err := f.readAddr(addr+24, used*(keySize+8)+keySize)
		if err != nil {
			return err
		}
		for i := uint64(0); i < used; i++ {
			p := parser{b: b, at: int(i * (keySize + 8))}
			stored := uint64(p.u32())
			mask := p.u32()
			offs := make([]uint64, rank)
			for d := range offs {
				offs[d] = p.u64()
			}
			p.skip(8) // the element-size dimension
			child := p.u64()
			if p.err != nil {
				return p.err
			}
			if level > 0 {
				if err := walk(child, depth+1); err != nil {
					return err
				}
				continue
			}
			if placed++; placed > grid {
				return formatErr("%s: more chunks than the dataset holds", name)
			}
			if mask != 0 || stored != chunkBytes {
				return unsupported("%s: filtered chunks", name)
			}
			data, err := f.readAddr(child, chunkBytes)
			if err != nil {
				return err
			}
			if err := place(out, data, shape, chunk, offs, size); err != nil {
				return formatErr("%s: %v", name, err)
			}
		}
		return nil
	}
	return walk(tree, 0)
}

// place copies one chunk (dims chunk, at element offsets offs) into the
// array out of the given shape, clipping at the array's edges.
func place(out, data []byte, shape, chunk, offs []uint64, size int) error {
	rank := len(shape)
	for d := range offs {
		if offs[d]%chunk[d] != 0 || offs[d] >= shape[d] && shape[d] > 0 {
			return formatErr("chunk offset %v outside %v", offs, shape)
		}
	}
	last := rank - 1
	run := min(chunk[last], shape[last]-offs[last]) * uint64(size)
	idx := make([]uint64, rank) // position inside the chunk, last dim 0
	for {
		var src, dst uint64
		for d := 0; d < rank; d++ {
			src = src*chunk[d] + idx[d]
			dst = dst*shape[d] + offs[d] + idx[d]
		}
		src *= uint64(size)
		dst *= uint64(size)
		copy(out[dst:dst+run], data[src:src+run])
		d := last - 1
		for ; d >= 0; d-- {
			idx[d]++
			if idx[d] < chunk[d] && offs[d]+idx[d] < shape[d] {
				break
			}
			idx[d] = 0
		}
		if d < 0 {
			return nil
		}
	}
}
