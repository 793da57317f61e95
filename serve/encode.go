package serve

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"sync"
	"unsafe"

	"google.golang.org/protobuf/proto"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/ctf"
	"github.com/batchprep/batchprep/corpus/source"
	pb "github.com/batchprep/batchprep/proto/batchpreppb"
)

// arena hands out consecutive parts of one allocation, so that a message's
// arrays cost one allocation instead of one each.
type arena []byte

// take returns the next n bytes.
func (a *arena) take(n int) []byte {
	if n == 0 {
		return nil
	}
	b := (*a)[:n:n]
	*a = (*a)[n:]
	return b
}

// littleEndian: this machine stores numbers as the wire does, so an array
// is copied as it is (a memmove) instead of number by number.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// raw returns v's memory as bytes; size is the size of one element.
func raw[T any](v []T, size int) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), size*len(v))
}

func (a *arena) int32s(v []int32) []byte {
	b := a.take(4 * len(v))
	if littleEndian {
		copy(b, raw(v, 4))
		return b
	}
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return b
}

func (a *arena) float32s(v []float32) []byte {
	b := a.take(4 * len(v))
	if littleEndian {
		copy(b, raw(v, 4))
		return b
	}
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func (a *arena) ints(v []int) []byte {
	b := a.take(8 * len(v))
	if littleEndian && unsafe.Sizeof(int(0)) == 8 {
		copy(b, raw(v, 8))
		return b
	}
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
	}
	return b
}

// intsAs32 writes v's numbers as int32s (corpus indices, each < MaxCorpora).
func (a *arena) intsAs32(v []int) []byte {
	b := a.take(4 * len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return b
}

func (a *arena) uint64s(v []uint64) []byte {
	b := a.take(8 * len(v))
	if littleEndian {
		copy(b, raw(v, 8))
		return b
	}
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], x)
	}
	return b
}

// elision tells, per sparse stream of mb, which arrays encodeMinibatch
// leaves out (SequenceRequest.elide_unit_sparse): bit 0 indptr, bit 1
// values.
func elision(mb *source.Minibatch, elide bool, out []uint8) []uint8 {
	out = out[:0]
	for i := range mb.Streams {
		b := &mb.Streams[i]
		var e uint8
		if elide && b.Sparse {
			if len(b.RowStart) == len(b.Indices)+1 && corpus.IsIota(b.RowStart) {
				e |= 1
			}
			if corpus.AllOnes(b.Values) {
				e |= 2
			}
		}
		out = append(out, e)
	}
	return out
}

// arraysBytes is the size of mb's arrays as encodeMinibatch writes them.
func arraysBytes(mb minibatch, elided []uint8) int {
	n := 8 * len(mb.Sequences)
	if mb.corpora > 0 {
		n += 4 * len(mb.Sequences) // its corpus
	}
	for i := range mb.Streams {
		b := &mb.Streams[i]
		n += 4 * len(mb.Sequences)
		if b.Sparse {
			n += 4 * len(b.Indices)
			if elided[i]&1 == 0 {
				n += 4 * len(b.RowStart)
			}
			if elided[i]&2 == 0 {
				n += 4 * len(b.Values)
			}
		} else {
			n += 4 * len(b.Dense)
		}
	}
	return n
}

// buffers recycles the arrays of a call's messages: a message's bytes are
// taken from free, and go back there once the message is sent (grpc-go has
// encoded a message when Send returns; Options.ServerOptions must not add a
// stats handler that keeps messages). Reuse spares the allocation, the
// zeroing and the collection of every minibatch's arrays.
type buffers struct {
	free, used [][]byte
	elided     []uint8 // encodeMinibatch's scratch
	tail       []byte  // with packed: the state tail the call sent last
}

// get returns n bytes, recycled when possible.
func (b *buffers) get(n int) []byte {
	var x []byte
	if k := len(b.free); k > 0 {
		x, b.free = b.free[k-1], b.free[:k-1]
	}
	if cap(x) < n {
		x = make([]byte, n, n+n/4)
	}
	b.used = append(b.used, x)
	return x[:n]
}

// recycle makes every buffer handed out since the last call free again:
// call it once the messages that hold them are sent.
func (b *buffers) recycle() {
	b.free = append(b.free, b.used...)
	clear(b.used)
	b.used = b.used[:0]
}

// encodeMinibatch converts mb (and the state after it) into a message that
// owns its bytes, all in one buffer from bufs: mb's buffers are reused by
// the next call. On little-endian machines the arrays are copied as they
// are. With req.Packed the buffer goes out whole as arrays (its
// layout is SequenceMinibatch.arrays'), the ids joined and the state's
// tail only when it differs from the last one this call sent. A mixture's
// minibatch carries each sequence's corpus (int32) right after its
// sequences, in arrays or in its own field.
func encodeMinibatch(mb minibatch, state []byte, bufs *buffers, req *pb.SequenceRequest) *pb.SequenceMinibatch {
	bufs.elided = elision(mb.Minibatch, req.ElideUnitSparse, bufs.elided)
	whole := bufs.get(arraysBytes(mb, bufs.elided))
	a := arena(whole)
	m := &pb.SequenceMinibatch{
		Step: mb.Step, Epoch: int32(mb.Epoch), Sweep: mb.Sweep, Start: mb.Start, End: mb.End,
		EndOfSweep: mb.EndOfSweep, EndOfEpoch: mb.EndOfEpoch,
		Sequences: a.ints(mb.Sequences),
		State:     state,
	}
	for _, s := range mb.Skipped {
		m.Skipped = append(m.Skipped, int64(s.Sequence))
	}
	if mb.corpora > 0 {
		m.Corpus = a.intsAs32(mb.corpus)
		m.SkippedCorpus = int32List(mb.skippedCorpus)
	}
	m.Streams = make([]*pb.StreamData, len(mb.Streams))
	data := make([]pb.StreamData, len(mb.Streams))
	for i := range mb.Streams {
		b := &mb.Streams[i]
		lengths := a.take(4 * len(mb.Sequences))
		for j := range len(mb.Sequences) {
			binary.LittleEndian.PutUint32(lengths[4*j:], uint32(b.SeqStart[j+1]-b.SeqStart[j]))
		}
		d := &data[i]
		d.Name, d.Dim, d.Sparse, d.Lengths = b.Name, int32(b.Dim), b.Sparse, lengths
		if b.Sparse {
			d.UnitRows, d.UnitValues = bufs.elided[i]&1 != 0, bufs.elided[i]&2 != 0
			if !d.UnitRows {
				d.Indptr = a.int32s(b.RowStart)
			}
			d.Indices = a.int32s(b.Indices)
			if !d.UnitValues {
				d.Values = a.float32s(b.Values)
			}
		} else {
			d.Dense = a.float32s(b.Dense)
		}
		m.Streams[i] = d
	}
	if !req.Packed {
		m.Ids = append([]string(nil), mb.IDs...)
		return m
	}
	m.Arrays, m.Sequences, m.Corpus = whole, nil, nil
	m.SequenceCount = proto.Int32(int32(len(mb.Sequences)))
	for i := range data {
		d, b := &data[i], &mb.Streams[i]
		d.Lengths, d.Indptr, d.Indices, d.Values, d.Dense = nil, nil, nil, nil, nil
		d.Samples = int64(b.Samples())
		if b.Sparse {
			d.Entries = int64(len(b.Indices))
		}
	}
	m.IdsJoined = joinIDs(mb.IDs, bufs)
	// The state ends with the call's fingerprint: sent once.
	if i := bytes.Index(state, []byte(`,"fingerprint":`)); i >= 0 {
		m.State = state[:i]
		if tail := state[i:]; !bytes.Equal(tail, bufs.tail) {
			m.StateTail = tail
			bufs.tail = append(bufs.tail[:0], tail...)
		}
	}
	return m
}

// int32List converts corpus indices for a repeated int32 field (nil when
// there are none).
func int32List(v []int) []int32 {
	if len(v) == 0 {
		return nil
	}
	out := make([]int32, len(v))
	for i, x := range v {
		out[i] = int32(x)
	}
	return out
}

// joinIDs returns ids joined by '\n', in a buffer from bufs.
func joinIDs(ids []string, bufs *buffers) []byte {
	if len(ids) == 0 {
		return nil
	}
	n := len(ids) - 1
	for _, id := range ids {
		n += len(id)
	}
	b := bufs.get(n)[:0]
	for i, id := range ids {
		if i > 0 {
			b = append(b, '\n')
		}
		b = append(b, id...)
	}
	return b
}

// maxDiagnostics is how many reader diagnostics a call sends, as many as
// `batchprep read` prints.
const maxDiagnostics = 20

// diagnostics collects a call's reader diagnostics (the ctf.Session's warn
// callback, called by the goroutines that parse ahead) until the next
// message takes them (SequenceMinibatch.warnings).
type diagnostics struct {
	mu      sync.Mutex
	pending []string
	seen    int
}

// warn records e, in the words `batchprep read` prints it.
func (d *diagnostics) warn(e ctf.Error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.seen++
	switch {
	case d.seen <= maxDiagnostics:
		d.pending = append(d.pending, strings.TrimPrefix(e.Error(), "ctf: "))
	case d.seen == maxDiagnostics+1:
		d.pending = append(d.pending, fmt.Sprintf("more than %d diagnostics: the rest of this call's are not sent", maxDiagnostics))
	}
}

// take appends the diagnostics recorded since the last call to dst.
func (d *diagnostics) take(dst []string) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	dst = append(dst, d.pending...)
	d.pending = d.pending[:0]
	return dst
}
