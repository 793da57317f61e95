package model

import (
	"math/rand/v2"
	"sync/atomic"
)

// Tables the trainer holds (mapped tables) live outside the Go heap: their
// memory is taken from the system when the table is made and given back
// when the trainer calls Release, at the point it drops the table, so the
// process's resident memory follows the trainer's own count of tables and
// not the collector's timing. The collector never sees that memory: a
// mapped table that nobody releases stays mapped until the process exits.
// Tables from NewTable and MakeTable stay ordinary Go memory (eval, export,
// tests, the distributed trainer); Release merely drops their arrays.

// MapTable is MakeTable for a table the caller must Release: its arrays
// are mapped outside the Go heap (a plain allocation where the system
// offers no anonymous mappings), zeroed, and advised as huge pages when
// large. It counts in Resident until released.
func MapTable(rows, dim int) *Table {
	t := &Table{Rows: rows, Dim: dim}
	t.Emb, t.mem[0] = mapFloats(rows * dim)
	t.Acc, t.mem[1] = mapFloats(rows)
	t.mapped = true
	resident.add(1, t.bytes())
	return t
}

// NewMappedTable is NewTable for a table the caller must Release: the same
// values as NewTable draws from rng, in memory mapped as MapTable's.
func NewMappedTable(rows, dim int, initScale float64, rng *rand.Rand) *Table {
	t := MapTable(rows, dim)
	t.fill(initScale, rng)
	return t
}

// Release gives a table's memory back: a mapped table's arrays are
// unmapped at once, an ordinary table's are left to the collector. Either
// way the table is empty afterwards (Rows, Emb and Acc are zero), so a
// later use of it fails on an index out of range instead of reading memory
// that is gone. Release is idempotent; it must not race with a use of the
// table (the trainer releases a table only once no worker, reader or
// writer holds it).
func (t *Table) Release() {
	if t == nil || !t.released.CompareAndSwap(false, true) {
		return
	}
	if t.mapped {
		resident.add(-1, -t.bytes())
	}
	t.Rows, t.Emb, t.Acc = 0, nil, nil
	for i, m := range t.mem {
		unmapBytes(m)
		t.mem[i] = nil
	}
}

// bytes is the size of a table's arrays.
func (t *Table) bytes() int64 { return 4 * int64(len(t.Emb)+len(t.Acc)) }

// Residency counts the mapped tables not yet released and their bytes.
type Residency struct {
	Tables int
	Bytes  int64
}

// residency is the process's count of mapped tables, with its high-water
// mark since the last ResetPeakResident.
type residency struct {
	tables, bytes         atomic.Int64
	peakTables, peakBytes atomic.Int64
}

var resident residency

func (r *residency) add(n, b int64) {
	tables, bytes := r.tables.Add(n), r.bytes.Add(b)
	raise(&r.peakTables, tables)
	raise(&r.peakBytes, bytes)
}

// raise sets *m to v if v is larger.
func raise(m *atomic.Int64, v int64) {
	for old := m.Load(); v > old && !m.CompareAndSwap(old, v); old = m.Load() {
	}
}

// Resident is the mapped tables held now.
func Resident() Residency {
	return Residency{Tables: int(resident.tables.Load()), Bytes: resident.bytes.Load()}
}

// PeakResident is the most mapped tables (and, separately, bytes) held at
// once since the last ResetPeakResident, or since the process started.
func PeakResident() Residency {
	return Residency{Tables: int(resident.peakTables.Load()), Bytes: resident.peakBytes.Load()}
}

// ResetPeakResident starts new high-water marks, of the tables and of
// WorkerMapped, at what is held now.
func ResetPeakResident() {
	for _, r := range []*residency{&resident, &workMapped} {
		r.peakTables.Store(r.tables.Load())
		r.peakBytes.Store(r.bytes.Load())
	}
}
