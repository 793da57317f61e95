package hdf5

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
)

// Member is one link of a group.
type Member struct {
	Name string
	addr uint64
}

// Members returns the links of group o: in creation order for link
// messages, in name order for a symbol table and for dense storage.
func (o *Object) Members() ([]Member, error) {
	if !o.IsGroup() {
		return nil, fmt.Errorf("hdf5: %s is a dataset, not a group", o.Name)
	}
	if m := o.find(msgSymbolTable); m != nil {
		p := parser{b: m.body}
		tree, heap := p.u64(), p.u64()
		if p.err != nil {
			return nil, p.err
		}
		return o.f.symbolTable(tree, heap)
	}
	if m := o.find(msgLinkInfo); m != nil {
		p := parser{b: m.body}
		p.skip(1)
		fl := p.u8()
		if fl&1 != 0 {
			p.skip(8)
		}
		heap, tree := p.u64(), p.u64()
		if p.err != nil {
			return nil, p.err
		}
		if heap != undef {
			objs, err := o.f.denseObjects(heap, tree, 4)
			if err != nil {
				return nil, fmt.Errorf("group %s: %w", o.Name, err)
			}
			var out []Member
			for _, b := range objs {
				mb, err := parseLink(b)
				if err != nil {
					return nil, err
				}
				if mb != nil {
					out = append(out, *mb)
				}
			}
			sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
			return out, nil
		}
	}
	var out []Member
	for _, m := range o.msgs {
		if m.typ != msgLink {
			continue
		}
		mb, err := parseLink(m.body)
		if err != nil {
			return nil, err
		}
		if mb != nil {
			out = append(out, *mb)
		}
	}
	return out, nil
}

// parseLink decodes a link message; soft and external links give nil.
func parseLink(b []byte) (*Member, error) {
	p := parser{b: b}
	if p.u8() != 1 {
		return nil, unsupported("link message version")
	}
	flags := p.u8()
	kind := byte(0)
	if flags&0x08 != 0 {
		kind = p.u8()
	}
	if flags&0x04 != 0 {
		p.skip(8)
	}
	if flags&0x10 != 0 {
		p.skip(1)
	}
	n := int(p.uN(1 << (flags & 3)))
	name := p.bytes(n)
	if p.err != nil {
		return nil, p.err
	}
	if kind != 0 {
		return nil, nil
	}
	addr := p.u64()
	if p.err != nil {
		return nil, p.err
	}
	return &Member{Name: string(name), addr: addr}, nil
}

// symbolTable lists a version 1 B-tree of symbol nodes, names in the
// local heap.
func (f *File) symbolTable(tree, heapAddr uint64) ([]Member, error) {
	hb, err := f.readAddr(heapAddr, 32)
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(hb[:4], []byte("HEAP")) {
		return nil, formatErr("local heap at %#x has no HEAP signature", heapAddr)
	}
	hp := parser{b: hb, at: 8}
	segSize, _, segAddr := hp.u64(), hp.u64(), hp.u64()
	heap, err := f.readAddr(segAddr, segSize)
	if err != nil {
		return nil, err
	}
	var out []Member
	visited := map[uint64]bool{}
	var walk func(addr uint64, depth int) error
	walk = func(addr uint64, depth int) error {
		if depth > maxDepth || visited[addr] {
			return formatErr("group B-tree at %#x loops", addr)
		}
		visited[addr] = true
		head, err := f.readAddr(addr, 24)
		if err != nil {
			return err
		}
		switch string(head[:4]) {
		case "SNOD":
			n := uint64(head[6]) | uint64(head[7])<<8
			b, err := f.readAddr(addr+8, 40*n)
			if err != nil {
				return err
			}
			for i := uint64(0); i < n; i++ {
				e := parser{b: b[40*i:]}
				off, obj := e.u64(), e.u64()
				if off >= uint64(len(heap)) {
					return formatErr("symbol name offset %d outside the local heap", off)
				}
				name, _, _ := strings.Cut(string(heap[off:]), "\x00")
				out = append(out, Member{Name: name, addr: obj})
			}
			return nil
		case "TREE":
			if head[4] != 0 {
				return formatErr("group B-tree node at %#x is not a group node", addr)
			}
			used := uint64(head[6]) | uint64(head[7])<<8
			// key0, child0, key1, ..., childN-1, keyN (8 bytes each).
			b, err := f.readAddr(addr+24, 8*(2*used+1))
			if err != nil {
				return err
			}
			for i := uint64(0); i < used; i++ {
				c := parser{b: b, at: int(8 + 16*i)}
				if err := walk(c.u64(), depth+1); err != nil {
					return err
				}
			}
			return nil
		}
		return formatErr("no B-tree or symbol node at %#x", addr)
	}
	if err := walk(tree, 0); err != nil {
		return nil, err
	}
	if len(out) > maxMessages {
		return nil, formatErr("group has too many links")
	}
	return out, nil
}

// Root returns the root group.
func (f *File) Root() (*Object, error) { return f.object(f.root, "/") }

// Get returns the object at path ("a/b/c", relative to the root).
func (f *File) Get(path string) (*Object, error) {
	o, err := f.Root()
	if err != nil {
		return nil, err
	}
	for _, name := range strings.Split(strings.Trim(path, "/"), "/") {
		if name == "" {
			continue
		}
		ms, err := o.Members()
		if err != nil {
			return nil, err
		}
		found := false
		for _, m := range ms {
			if m.Name == name {
				if o, err = f.object(m.addr, join(o.Name, name)); err != nil {
					return nil, err
				}
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("hdf5: no %q in %s: %w", name, o.Name, ErrNotFound)
		}
	}
	return o, nil
}

// Child returns the member of group o called name.
func (o *Object) Child(m Member) (*Object, error) {
	return o.f.object(m.addr, join(o.Name, m.Name))
}

func join(dir, name string) string {
	if dir == "/" {
		return name
	}
	return dir + "/" + name
}
