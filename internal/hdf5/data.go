package hdf5

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Attrs returns o's attributes in header order.
func (o *Object) Attrs() ([]*Attribute, error) {
	var out []*Attribute
	for _, m := range o.msgs {
		switch m.typ {
		case msgAttribute:
			a, err := parseAttr(m.body)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", o.Name, err)
			}
			out = append(out, a)
		case msgAttrInfo:
			p := parser{b: m.body}
			p.skip(1)
			if p.u8()&1 != 0 {
				p.skip(2)
			}
			heap, tree := p.u64(), p.u64()
			if p.err != nil {
				return nil, formatErr("%s: attribute info message too short", o.Name)
			}
			if heap == undef {
				continue
			}
			objs, err := o.f.denseObjects(heap, tree, 0)
			if err != nil {
				return nil, fmt.Errorf("%s: attributes: %w", o.Name, err)
			}
			for _, b := range objs {
				a, err := parseAttr(b)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", o.Name, err)
				}
				out = append(out, a)
			}
		}
	}
	return out, nil
}

// Attr returns the value of o's attribute name (see Attribute.Value), or
// an error wrapping ErrNotFound.
func (o *Object) Attr(name string) (any, error) {
	as, err := o.Attrs()
	if err != nil {
		return nil, err
	}
	for _, a := range as {
		if a.Name == name {
			if a.Err == nil && a.Type.Class == VarString {
				return o.f.varString(a)
			}
			return a.Value()
		}
	}
	return nil, fmt.Errorf("hdf5: %s has no attribute %q: %w", o.Name, name, ErrNotFound)
}

// Shape returns dataset o's dimensions and element type.
func (o *Object) Shape() ([]uint64, Type, error) {
	ds, dt := o.find(msgDataspace), o.find(msgDatatype)
	if ds == nil || dt == nil || o.find(msgLayout) == nil {
		return nil, Type{}, fmt.Errorf("hdf5: %s is not a dataset", o.Name)
	}
	if dt.flags&2 != 0 {
		return nil, Type{}, unsupported("%s has a shared (committed) datatype", o.Name)
	}
	shape, _, err := parseSpace(ds.body)
	if err != nil {
		return nil, Type{}, fmt.Errorf("%s: %w", o.Name, err)
	}
	t, _, err := parseType(dt.body)
	if err != nil {
		return nil, Type{}, fmt.Errorf("%s: %w", o.Name, err)
	}
	return shape, t, nil
}

// Read returns dataset o's elements, row-major and little-endian.
func (o *Object) Read() ([]byte, error) {
	shape, t, err := o.Shape()
	if err != nil {
		return nil, err
	}
	if o.find(msgFilters) != nil {
		return nil, unsupported("%s is filtered (compressed)", o.Name)
	}
	if o.find(msgExternal) != nil {
		return nil, unsupported("%s keeps its data in external files", o.Name)
	}
	n, ok := elements(shape, t.Size, o.f.size)
	if !ok {
		return nil, formatErr("%s: %v elements of %d bytes do not fit in the file", o.Name, shape, t.Size)
	}
	lay := o.find(msgLayout)
	p := parser{b: lay.body}
	ver := p.u8()
	if ver != 3 && ver != 4 {
		return nil, unsupported("%s: data layout version %d", o.Name, ver)
	}
	switch class := p.u8(); class {
	case 0: // compact
		size := int(p.u16())
		b := p.bytes(size)
		if p.err != nil || uint64(size) < n {
			return nil, formatErr("%s: compact data shorter than its shape", o.Name)
		}
		return append([]byte(nil), b[:n]...), nil
	case 1: // contiguous
		addr, size := p.u64(), p.u64()
		if p.err != nil {
			return nil, p.err
		}
		if n == 0 {
			return []byte{}, nil
		}
		if size < n {
			return nil, formatErr("%s: %d bytes stored for %d", o.Name, size, n)
		}
		if addr == undef {
			return make([]byte, n), nil // never written: the fill value 0
		}
		return o.f.readAddr(addr, n)
	case 2: // chunked
		if ver != 3 {
			return nil, unsupported("%s: chunk indexes of layout version 4 (libver latest)", o.Name)
		}
		rank := int(p.u8())
		tree := p.u64()
		if rank < 2 || rank-1 != len(shape) {
			return nil, formatErr("%s: chunk rank %d for %d dimensions", o.Name, rank, len(shape))
		}
		chunk := make([]uint64, rank-1)
		for i := range chunk {
			chunk[i] = uint64(p.u32())
			if chunk[i] == 0 {
				return nil, formatErr("%s: chunk dimension 0", o.Name)
			}
		}
		if p.err != nil {
			return nil, p.err
		}
		out := make([]byte, n)
		if n == 0 || tree == undef {
			return out, nil
		}
		return out, o.f.readChunks(o.Name, tree, shape, chunk, t.Size, out)
	default:
		return nil, unsupported("%s: data layout class %d", o.Name, class)
	}
}

// Float32s reads a float32 dataset.
func (o *Object) Float32s() ([]float32, error) {
	_, t, err := o.Shape()
	if err != nil {
		return nil, err
	}
	if t != Float32 {
		return nil, fmt.Errorf("hdf5: %s holds %s, want float32", o.Name, t)
	}
	b, err := o.Read()
	if err != nil {
		return nil, err
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

// Int64s reads an integer dataset (any size, signed or not) as int64.
func (o *Object) Int64s() ([]int64, error) {
	_, t, err := o.Shape()
	if err != nil {
		return nil, err
	}
	if t.Class != Int && t.Class != Uint || t.Size > 8 {
		return nil, fmt.Errorf("hdf5: %s holds %s, want integers", o.Name, t)
	}
	b, err := o.Read()
	if err != nil {
		return nil, err
	}
	v := make([]int64, len(b)/t.Size)
	if t == Int64 {
		for i := range v {
			v[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
		}
		return v, nil
	}
	for i := range v {
		a := &Attribute{Type: t, Data: b[i*t.Size:]}
		x, _ := a.Value()
		v[i] = x.(int64)
	}
	return v, nil
}
