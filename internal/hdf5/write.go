package hdf5

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strings"
)

// A Tree is a file to write: a root group of groups and datasets.
// Build it with Root, then call WriteTo.
type Tree struct {
	root *Group
}

// NewTree returns an empty file.
func NewTree() *Tree { return &Tree{root: &Group{}} }

// Root is the file's root group.
func (t *Tree) Root() *Group { return t.root }

// Group is a group being built: its attributes and links in the order
// they were added.
type Group struct {
	attrs []attr
	links []link
}

// Dataset is a dataset being built.
type Dataset struct {
	typ   Type
	shape []uint64
	data  func(io.Writer) error
	attrs []attr
}

type link struct {
	name string
	g    *Group
	d    *Dataset
}

type attr struct {
	name  string
	typ   Type
	shape []uint64
	data  []byte
}

// SetAttr sets an attribute: v is an int64, float64 or string (stored
// as a fixed-length UTF-8 string).
func (g *Group) SetAttr(name string, v any) { g.attrs = setAttr(g.attrs, name, v) }

// SetAttr sets an attribute of the dataset, as Group.SetAttr.
func (d *Dataset) SetAttr(name string, v any) { d.attrs = setAttr(d.attrs, name, v) }

func setAttr(as []attr, name string, v any) []attr {
	var a attr
	a.name = name
	switch x := v.(type) {
	case int64:
		a.typ, a.data = Int64, binary.LittleEndian.AppendUint64(nil, uint64(x))
	case int:
		a.typ, a.data = Int64, binary.LittleEndian.AppendUint64(nil, uint64(x))
	case float64:
		a.typ, a.data = Float64, binary.LittleEndian.AppendUint64(nil, math.Float64bits(x))
	case string:
		a.typ, a.data = Type{String, max(len(x), 1)}, []byte(x)
		if len(x) == 0 {
			a.data = []byte{0}
		}
	default:
		panic(fmt.Sprintf("hdf5: attribute %q: unsupported value type %T", name, v))
	}
	for i := range as {
		if as[i].name == name {
			as[i] = a
			return as
		}
	}
	return append(as, a)
}

// Group returns the group at path below g ("a/b"), creating it and the
// groups on the way. It panics if a dataset is in the way.
func (g *Group) Group(path string) *Group {
	for _, name := range strings.Split(path, "/") {
		g = g.child(name)
	}
	return g
}

func (g *Group) child(name string) *Group {
	for _, l := range g.links {
		if l.name == name {
			if l.g == nil {
				panic(fmt.Sprintf("hdf5: %q is a dataset, not a group", name))
			}
			return l.g
		}
	}
	c := &Group{}
	g.links = append(g.links, link{name: name, g: c})
	return c
}

// Dataset adds a contiguous dataset at path below g (groups on the way are
// created): elements of type t in the given shape (row-major), whose bytes
// (little-endian, exactly the product of shape times t.Size of them) data
// writes when the file is written.
func (g *Group) Dataset(path string, t Type, shape []uint64, data func(io.Writer) error) *Dataset {
	dir, name := "", path
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		dir, name = path[:i], path[i+1:]
	}
	if dir != "" {
		g = g.Group(dir)
	}
	for _, l := range g.links {
		if l.name == name {
			panic(fmt.Sprintf("hdf5: %q added twice", path))
		}
	}
	d := &Dataset{typ: t, shape: append([]uint64(nil), shape...), data: data}
	g.links = append(g.links, link{name: name, d: d})
	return d
}

// Float32s is a dataset source for v.
func Float32s(v []float32) func(io.Writer) error {
	return func(w io.Writer) error {
		var buf [4096]byte
		for len(v) > 0 {
			n := min(len(v), len(buf)/4)
			for i, x := range v[:n] {
				binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(x))
			}
			if _, err := w.Write(buf[:4*n]); err != nil {
				return err
			}
			v = v[n:]
		}
		return nil
	}
}

// Int64s is a dataset source for v.
func Int64s(v []int64) func(io.Writer) error {
	return func(w io.Writer) error {
		var buf [4096]byte
		for len(v) > 0 {
			n := min(len(v), len(buf)/8)
			for i, x := range v[:n] {
				binary.LittleEndian.PutUint64(buf[8*i:], uint64(x))
			}
			if _, err := w.Write(buf[:8*n]); err != nil {
				return err
			}
			v = v[n:]
		}
		return nil
	}
}

// Bytes is a dataset source for raw bytes.
func Bytes(b []byte) func(io.Writer) error {
	return func(w io.Writer) error { _, err := w.Write(b); return err }
}

func (d *Dataset) nbytes() uint64 {
	n := uint64(d.typ.Size)
	for _, s := range d.shape {
		n *= s
	}
	return n
}

// object is one object header to write.
type object struct {
	g    *Group
	d    *Dataset
	addr uint64
	size uint64
	data uint64 // a dataset's data address
}

// WriteTo writes the file: superblock, every object header, then every
// dataset's data in the order added.
func (t *Tree) WriteTo(w io.Writer) (int64, error) {
	var objs []*object
	index := map[any]*object{}
	var walk func(g *Group)
	walk = func(g *Group) {
		o := &object{g: g}
		objs = append(objs, o)
		index[g] = o
		for _, l := range g.links {
			if l.g != nil {
				walk(l.g)
			} else {
				o := &object{d: l.d}
				objs = append(objs, o)
				index[l.d] = o
			}
		}
	}
	walk(t.root)
	const sbSize = 48
	at := uint64(sbSize)
	for _, o := range objs {
		// Sizes do not depend on addresses (all are 8 bytes), so encode
		// once with zeros to measure.
		h, tooLarge := encodeObject(o, index)
		if tooLarge {
			return 0, fmt.Errorf("hdf5: an attribute is larger than %d bytes, which this writer cannot store", MaxAttr)
		}
		o.size = uint64(len(h))
		o.addr = at
		at += o.size
	}
	for _, o := range objs {
		if o.d != nil {
			if n := o.d.nbytes(); n > 0 {
				o.data = at
				at += n
			} else {
				o.data = undef
			}
		}
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	cw := &countWriter{w: bw}
	sb := append([]byte(nil), signature...)
	sb = append(sb, 2, 8, 8, 0)
	sb = binary.LittleEndian.AppendUint64(sb, 0)
	sb = binary.LittleEndian.AppendUint64(sb, undef)
	sb = binary.LittleEndian.AppendUint64(sb, at)
	sb = binary.LittleEndian.AppendUint64(sb, objs[0].addr)
	sb = binary.LittleEndian.AppendUint32(sb, lookup3(sb))
	cw.Write(sb)
	for _, o := range objs {
		h, _ := encodeObject(o, index)
		cw.Write(h)
	}
	for _, o := range objs {
		if o.d == nil || o.data == undef {
			continue
		}
		before := cw.n
		if err := o.d.data(cw); err != nil {
			return cw.n, err
		}
		if got := uint64(cw.n - before); got != o.d.nbytes() {
			return cw.n, fmt.Errorf("hdf5: a dataset source wrote %d bytes, want %d", got, o.d.nbytes())
		}
	}
	if cw.err != nil {
		return cw.n, cw.err
	}
	return cw.n, bw.Flush()
}

type countWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
	return n, err
}

// MaxAttr is the largest attribute (name, type and value) the writer
// stores: one header message (dense attribute storage is not written).
const MaxAttr = math.MaxUint16 - 64

// encodeObject returns a version 2 object header; tooLarge reports a
// message (an attribute) past 64 KiB, which it cannot hold.
func encodeObject(o *object, index map[any]*object) (h []byte, tooLarge bool) {
	var msgs []byte
	add := func(typ byte, flags byte, body []byte) {
		if len(body) > math.MaxUint16 {
			tooLarge = true
		}
		msgs = append(msgs, typ)
		msgs = binary.LittleEndian.AppendUint16(msgs, uint16(len(body)))
		msgs = append(msgs, flags)
		msgs = append(msgs, body...)
	}
	var attrs []attr
	if o.g != nil {
		li := []byte{0, 0}
		li = binary.LittleEndian.AppendUint64(li, undef)
		li = binary.LittleEndian.AppendUint64(li, undef)
		add(msgLinkInfo, 0, li)
		add(msgGroupInfo, 0, []byte{0, 0})
		for _, l := range o.g.links {
			target := index[any(l.g)]
			if l.d != nil {
				target = index[any(l.d)]
			}
			add(msgLink, 0, encodeLink(l.name, target.addr))
		}
		attrs = o.g.attrs
	} else {
		d := o.d
		add(msgDataspace, 0, encodeDataspace(d.shape))
		add(msgDatatype, 1, encodeDatatype(d.typ))
		add(msgFill, 1, []byte{3, 0x0a})
		lay := []byte{3, 1}
		lay = binary.LittleEndian.AppendUint64(lay, o.data)
		lay = binary.LittleEndian.AppendUint64(lay, d.nbytes())
		add(msgLayout, 0, lay)
		attrs = d.attrs
	}
	for _, a := range attrs {
		add(msgAttribute, 0, encodeAttr(a))
	}
	h = []byte("OHDR")
	h = append(h, 2, 2)
	h = binary.LittleEndian.AppendUint32(h, uint32(len(msgs)))
	h = append(h, msgs...)
	return binary.LittleEndian.AppendUint32(h, lookup3(h)), tooLarge
}

func encodeLink(name string, addr uint64) []byte {
	b := []byte{1, 0x10}
	if len(name) > 255 {
		b[1] |= 1
	}
	b = append(b, 1) // UTF-8
	if len(name) > 255 {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(name)))
	} else {
		b = append(b, byte(len(name)))
	}
	b = append(b, name...)
	return binary.LittleEndian.AppendUint64(b, addr)
}

func encodeDataspace(shape []uint64) []byte {
	kind := byte(1)
	if len(shape) == 0 {
		kind = 0
	}
	b := []byte{2, byte(len(shape)), 0, kind}
	for _, s := range shape {
		b = binary.LittleEndian.AppendUint64(b, s)
	}
	return b
}

func encodeDatatype(t Type) []byte {
	var b []byte
	switch t.Class {
	case Int, Uint:
		signed := byte(0)
		if t.Class == Int {
			signed = 8
		}
		b = []byte{0x10 | 0, signed, 0, 0}
		b = binary.LittleEndian.AppendUint32(b, uint32(t.Size))
		b = binary.LittleEndian.AppendUint16(b, 0)
		b = binary.LittleEndian.AppendUint16(b, uint16(8*t.Size))
	case Float:
		if t.Size == 4 {
			b = []byte{0x11, 0x20, 31, 0}
			b = binary.LittleEndian.AppendUint32(b, 4)
			b = append(b, 0, 0, 32, 0, 23, 8, 0, 23)
			b = binary.LittleEndian.AppendUint32(b, 127)
		} else {
			b = []byte{0x11, 0x20, 63, 0}
			b = binary.LittleEndian.AppendUint32(b, 8)
			b = append(b, 0, 0, 64, 0, 52, 11, 0, 52)
			b = binary.LittleEndian.AppendUint32(b, 1023)
		}
	case String:
		b = []byte{0x13, 0x11, 0, 0} // null-padded UTF-8
		b = binary.LittleEndian.AppendUint32(b, uint32(t.Size))
	case Opaque:
		b = []byte{0x15, 0, 0, 0} // no tag
		b = binary.LittleEndian.AppendUint32(b, uint32(t.Size))
	}
	return b
}

func encodeAttr(a attr) []byte {
	dt := encodeDatatype(a.typ)
	ds := encodeDataspace(a.shape)
	b := []byte{3, 0}
	b = binary.LittleEndian.AppendUint16(b, uint16(len(a.name)+1))
	b = binary.LittleEndian.AppendUint16(b, uint16(len(dt)))
	b = binary.LittleEndian.AppendUint16(b, uint16(len(ds)))
	b = append(b, 1) // UTF-8 name
	b = append(b, a.name...)
	b = append(b, 0)
	b = append(b, dt...)
	b = append(b, ds...)
	return append(b, a.data...)
}
