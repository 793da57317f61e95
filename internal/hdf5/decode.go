package hdf5

import (
	"encoding/binary"
	"math"
	"strings"
)

// parseType decodes a datatype message body; n is the bytes it used.
func parseType(b []byte) (t Type, n int, err error) {
	p := parser{b: b}
	cv := p.u8()
	bits0 := p.u8()
	bits1 := p.u8()
	p.skip(1)
	size := int(p.u32())
	if p.err != nil {
		return t, 0, p.err
	}
	if size <= 0 || size > 1<<20 {
		return t, 0, formatErr("element size %d", size)
	}
	t.Size = size
	switch cv & 0x0f {
	case 0:
		if bits0&1 != 0 {
			return t, 0, unsupported("big-endian integers")
		}
		t.Class = Uint
		if bits0&8 != 0 {
			t.Class = Int
		}
		p.skip(4)
	case 1:
		if bits0&1 != 0 || bits0&0x40 != 0 {
			return t, 0, unsupported("big-endian floats")
		}
		if size != 4 && size != 8 {
			return t, 0, unsupported("%d-byte floats", size)
		}
		_ = bits1
		t.Class = Float
		p.skip(12)
	case 3:
		t.Class = String
	case 5:
		t.Class = Opaque
		p.skip(int(bits0+7) &^ 7)
	case 9:
		if bits0&0x0f != 1 {
			return t, 0, unsupported("variable-length sequences")
		}
		t.Class = VarString
		if _, n, err := parseType(b[p.at:]); err != nil {
			return t, 0, err
		} else {
			p.skip(n)
		}
	default:
		return t, 0, unsupported("datatype class %d", cv&0x0f)
	}
	if p.err != nil {
		return t, 0, p.err
	}
	return t, p.at, nil
}

// parseSpace decodes a dataspace message body: the shape (nil and
// scalar=true for a scalar); n is the bytes it used.
func parseSpace(b []byte) (shape []uint64, n int, err error) {
	p := parser{b: b}
	ver := p.u8()
	rank := int(p.u8())
	flags := p.u8()
	switch ver {
	case 1:
		p.skip(5)
	case 2:
		if p.u8() == 2 {
			return nil, p.at, unsupported("null dataspace")
		}
	default:
		return nil, 0, unsupported("dataspace version %d", ver)
	}
	if rank > 32 {
		return nil, 0, formatErr("dataspace of rank %d", rank)
	}
	shape = make([]uint64, rank)
	for i := range shape {
		shape[i] = p.u64()
	}
	if flags&1 != 0 {
		p.skip(8 * rank)
	}
	if ver == 1 && flags&2 != 0 {
		p.skip(8 * rank)
	}
	if p.err != nil {
		return nil, 0, p.err
	}
	return shape, p.at, nil
}

// elements is the product of shape, or false if it overflows or exceeds
// limit.
func elements(shape []uint64, size int, limit uint64) (uint64, bool) {
	n := uint64(size)
	for _, s := range shape {
		if s != 0 && n > limit/s {
			return 0, false
		}
		n *= s
	}
	return n, n <= limit
}

// Attribute is a decoded attribute.
type Attribute struct {
	Name  string
	Type  Type
	Shape []uint64
	Data  []byte // raw little-endian elements
	Err   error  // set when the attribute's type or space is not supported
}

// Value returns the attribute as an int64 (integers), float64 (floats) or
// string (strings, NUL padding removed), for a scalar or a one-element
// array.
func (a *Attribute) Value() (any, error) {
	if a.Err == nil && a.Type.Class == VarString {
		return nil, unsupported("attribute %q: read variable-length strings with Object.Attr", a.Name)
	}
	if a.Err != nil {
		return nil, a.Err
	}
	n, _ := elements(a.Shape, 1, math.MaxUint32)
	if n != 1 {
		return nil, unsupported("attribute %q has %d elements", a.Name, n)
	}
	switch a.Type.Class {
	case Int, Uint:
		var v uint64
		for i := a.Type.Size - 1; i >= 0; i-- {
			v = v<<8 | uint64(a.Data[i])
		}
		if a.Type.Class == Int && a.Type.Size < 8 && v>>(8*a.Type.Size-1)&1 == 1 {
			v |= ^uint64(0) << (8 * a.Type.Size)
		}
		return int64(v), nil
	case Float:
		if a.Type.Size == 4 {
			return float64(math.Float32frombits(binary.LittleEndian.Uint32(a.Data))), nil
		}
		return math.Float64frombits(binary.LittleEndian.Uint64(a.Data)), nil
	case String:
		return strings.TrimRight(string(a.Data), "\x00"), nil
	}
	return nil, unsupported("attribute %q of type %s", a.Name, a.Type)
}

func pad8(n int) int { return (n + 7) &^ 7 }

func parseAttr(b []byte) (*Attribute, error) {
	p := parser{b: b}
	ver := p.u8()
	flags := p.u8()
	nameSize := int(p.u16())
	dtSize := int(p.u16())
	dsSize := int(p.u16())
	if ver < 1 || ver > 3 {
		return nil, unsupported("attribute message version %d", ver)
	}
	if ver == 3 {
		p.skip(1)
	}
	padded := func(n int) int {
		if ver == 1 {
			return pad8(n)
		}
		return n
	}
	name := p.bytes(padded(nameSize))
	dt := p.bytes(padded(dtSize))
	ds := p.bytes(padded(dsSize))
	if p.err != nil {
		return nil, p.err
	}
	a := &Attribute{Name: strings.TrimRight(string(name[:min(nameSize, len(name))]), "\x00")}
	if ver > 1 && flags&3 != 0 {
		a.Err = unsupported("attribute %q uses a shared datatype or dataspace", a.Name)
		return a, nil
	}
	var err error
	if a.Type, _, err = parseType(dt); err != nil {
		a.Err = err
		return a, nil
	}
	if a.Shape, _, err = parseSpace(ds); err != nil {
		a.Err = err
		return a, nil
	}
	n, ok := elements(a.Shape, a.Type.Size, uint64(len(b)))
	if !ok {
		return nil, formatErr("attribute %q: data larger than its message", a.Name)
	}
	a.Data = p.bytes(int(n))
	if p.err != nil {
		return nil, p.err
	}
	return a, nil
}
