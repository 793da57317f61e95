package serve

import (
	"encoding/binary"
	"math"
	"unsafe"

	pb "github.com/batchprep/batchprep/proto/batchpreppb"
	"github.com/batchprep/batchprep/source"
)

// hostLittleEndian: arrays can be copied as memory.
var hostLittleEndian = func() bool { x := uint16(1); return *(*byte)(unsafe.Pointer(&x)) == 1 }()

// int32Bytes returns a little-endian copy of v.
func int32Bytes(v []int32) []byte {
	if len(v) == 0 {
		return nil
	}
	if hostLittleEndian {
		return append([]byte(nil), unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))...)
	}
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, uint32(x))
	}
	return b
}

func uint32Bytes(v []uint32) []byte {
	if len(v) == 0 {
		return nil
	}
	return int32Bytes(unsafe.Slice((*int32)(unsafe.Pointer(&v[0])), len(v)))
}

func float32Bytes(v []float32) []byte {
	if len(v) == 0 {
		return nil
	}
	if hostLittleEndian {
		return append([]byte(nil), unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))...)
	}
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

func intsAsInt64Bytes(v []int) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
	}
	return b
}

func uint64Bytes(v []uint64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], x)
	}
	return b
}

// encodeMinibatch converts mb (and the state after it) into a message that
// owns its bytes: mb's buffers are reused by the next call.
func encodeMinibatch(mb *source.Minibatch, state []byte) *pb.SequenceMinibatch {
	m := &pb.SequenceMinibatch{
		Step: mb.Step, Epoch: int32(mb.Epoch), Sweep: mb.Sweep, Start: mb.Start, End: mb.End,
		EndOfSweep: mb.EndOfSweep, EndOfEpoch: mb.EndOfEpoch,
		Sequences: intsAsInt64Bytes(mb.Sequences),
		Ids:       append([]string(nil), mb.IDs...),
		State:     state,
	}
	for _, s := range mb.Skipped {
		m.Skipped = append(m.Skipped, int64(s.Sequence))
	}
	lengths := make([]int32, len(mb.Sequences))
	m.Streams = make([]*pb.StreamData, len(mb.Streams))
	for i := range mb.Streams {
		b := &mb.Streams[i]
		for j := range lengths {
			lengths[j] = b.SeqStart[j+1] - b.SeqStart[j]
		}
		d := &pb.StreamData{Name: b.Name, Dim: int32(b.Dim), Sparse: b.Sparse, Lengths: int32Bytes(lengths)}
		if b.Sparse {
			d.Indptr, d.Indices, d.Values = int32Bytes(b.RowStart), int32Bytes(b.Indices), float32Bytes(b.Values)
		} else {
			d.Dense = float32Bytes(b.Dense)
		}
		m.Streams[i] = d
	}
	return m
}
