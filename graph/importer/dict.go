package importer

import "math"

// dict is one entity type's dictionary: names in first appearance order and
// their ids. After partitioning, part and off give each id's partition and
// offset inside it.
type dict struct {
	typ   string
	ids   map[string]uint32
	names []string
	part  []uint32
	off   []uint32
}

func newDict(typ string) *dict { return &dict{typ: typ, ids: map[string]uint32{}} }

func (d *dict) full() bool { return len(d.names) >= math.MaxUint32 }

// add inserts a name known to be absent and returns its id.
func (d *dict) add(name []byte) uint32 {
	id := uint32(len(d.names))
	s := string(name)
	d.ids[s] = id
	d.names = append(d.names, s)
	return id
}
