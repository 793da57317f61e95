package hdf5

import (
	"bytes"
	"encoding/binary"
)

// message is one header message: its type, flags and body.
type message struct {
	typ   uint16
	flags byte
	body  []byte
}

// Object is a group or a dataset of an open file.
type Object struct {
	f    *File
	Name string // the path it was found at
	addr uint64
	msgs []message
}

func (f *File) object(addr uint64, name string) (*Object, error) {
	o := &Object{f: f, Name: name, addr: addr}
	var err error
	o.msgs, err = f.messages(addr)
	if err != nil {
		return nil, err
	}
	return o, nil
}

type block struct{ addr, size uint64 }

// messages reads every message of the object header at addr, following
// continuation blocks.
func (f *File) messages(addr uint64) ([]message, error) {
	head, err := f.readAddr(addr, 16)
	if err != nil {
		return nil, err
	}
	var msgs []message
	seen := map[uint64]bool{addr: true}
	var queue []block
	v2 := bytes.Equal(head[:4], []byte("OHDR"))
	var flags byte
	if v2 {
		// Signature, version, flags, optional times and phase change
		// values, then the size of chunk 0 in 1, 2, 4 or 8 bytes.
		b, err := f.readAddr(addr, min(f.size-min(f.size, addr), 4+2+16+4+8))
		if err != nil {
			return nil, err
		}
		p := parser{b: b, at: 4}
		if p.u8() != 2 {
			return nil, unsupported("object header at %#x: version 2 signature with another version", addr)
		}
		flags = p.u8()
		if flags&0x20 != 0 {
			p.skip(16)
		}
		if flags&0x10 != 0 {
			p.skip(4)
		}
		size := p.uN(1 << (flags & 3))
		if p.err != nil {
			return nil, p.err
		}
		queue = append(queue, block{addr: addr, size: uint64(p.at) + size + 4})
	} else {
		if head[0] != 1 {
			return nil, formatErr("object header at %#x: unknown version %d", addr, head[0])
		}
		size := uint64(binary.LittleEndian.Uint32(head[8:]))
		queue = append(queue, block{addr: addr + 16, size: size})
	}
	for first := true; len(queue) > 0; first = false {
		bl := queue[0]
		queue = queue[1:]
		b, err := f.readAddr(bl.addr, bl.size)
		if err != nil {
			return nil, err
		}
		var p parser
		if v2 {
			if len(b) < 8 {
				return nil, formatErr("object header block at %#x too short", bl.addr)
			}
			sum := binary.LittleEndian.Uint32(b[len(b)-4:])
			if lookup3(b[:len(b)-4]) != sum {
				return nil, formatErr("object header at %#x: checksum mismatch", bl.addr)
			}
			start := 4 // "OCHK"
			if first {
				hp := parser{b: b, at: 6}
				if flags&0x20 != 0 {
					hp.skip(16)
				}
				if flags&0x10 != 0 {
					hp.skip(4)
				}
				hp.skip(1 << (flags & 3))
				start = hp.at
			} else if !bytes.Equal(b[:4], []byte("OCHK")) {
				return nil, formatErr("continuation block at %#x has no OCHK signature", bl.addr)
			}
			p = parser{b: b[:len(b)-4], at: start}
		} else {
			p = parser{b: b}
		}
		for p.err == nil {
			var m message
			if v2 {
				if len(p.b)-p.at < 4 {
					break // gap
				}
				m.typ = uint16(p.u8())
				size := int(p.u16())
				m.flags = p.u8()
				if flags&0x04 != 0 {
					p.skip(2)
				}
				m.body = p.bytes(size)
			} else {
				if len(p.b)-p.at < 8 {
					break
				}
				m.typ = p.u16()
				size := int(p.u16())
				m.flags = p.u8()
				p.skip(3)
				m.body = p.bytes(size)
			}
			if p.err != nil {
				return nil, formatErr("object header at %#x: a message runs past its block", addr)
			}
			if m.typ == msgContinue {
				q := parser{b: m.body}
				c := block{addr: q.u64(), size: q.u64()}
				if q.err != nil || seen[c.addr] {
					return nil, formatErr("object header at %#x: bad continuation", addr)
				}
				seen[c.addr] = true
				queue = append(queue, c)
				continue
			}
			if m.typ != msgNil {
				msgs = append(msgs, m)
			}
			if len(msgs) > maxMessages || len(seen) > maxMessages {
				return nil, formatErr("object header at %#x: too many messages", addr)
			}
		}
	}
	return msgs, nil
}

func (o *Object) find(typ uint16) *message {
	for i := range o.msgs {
		if o.msgs[i].typ == typ {
			return &o.msgs[i]
		}
	}
	return nil
}

// IsGroup reports whether o is a group (it has no dataset layout).
func (o *Object) IsGroup() bool { return o.find(msgLayout) == nil }
