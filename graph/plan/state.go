package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/batchprep/batchprep/internal/atomicfile"
	"github.com/batchprep/batchprep/internal/jsonmsg"
)

// StateVersion is the format version written in every State.
const StateVersion = 1

// Position is where a plan resumes: the next batch to yield is batch Batch
// of worker Worker in the bucket at place Index of the order of pass (Epoch,
// EdgeSet, Chunk). Worker == Batch == 0 means the bucket has not started;
// otherwise its bucket record was already yielded before the stop.
// Epoch == num_epochs means the plan is finished.
type Position struct {
	Epoch   int `json:"epoch"`
	EdgeSet int `json:"edge_set"`
	Chunk   int `json:"chunk"`
	Index   int `json:"index"`
	Worker  int `json:"worker"`
	Batch   int `json:"batch"`
}

// Fingerprint holds everything that changes the plan, one field per
// setting so that a mismatch can be named. num_epochs is not part of it:
// an epoch's plan does not depend on how many epochs follow, so a finished
// plan can be extended.
type Fingerprint struct {
	Seed             uint64  `json:"seed"`
	BucketOrder      string  `json:"bucket_order"`
	NumEdgeChunks    int     `json:"num_edge_chunks"` // resolved value
	Workers          int     `json:"workers"`
	BatchSize        int     `json:"batch_size"`
	EvalFraction     float64 `json:"eval_fraction"`
	DynamicRelations bool    `json:"dynamic_relations"`
	Partitions       [2]int  `json:"partitions"`
	EdgeSets         int     `json:"edge_sets"`
	Store            string  `json:"store"`
	// PartitionBuffer is c when the bucket order depends on it (the
	// buffer order), else 0 and omitted.
	PartitionBuffer int `json:"partition_buffer,omitempty"`
}

// State is a plan's resumable state: small, versioned JSON.
type State struct {
	Version     int         `json:"version"`
	Position    Position    `json:"position"`
	Fingerprint Fingerprint `json:"fingerprint"`
}

// ErrState marks a malformed or unusable state (errors.Is).
var ErrState = errors.New("plan: bad state")

// MismatchError lists the fingerprint fields in which a state differs from
// the plan it is restored into.
type MismatchError struct {
	Fields []string // "workers: state 2, plan 4", ...
}

func (e *MismatchError) Error() string {
	return "plan: state was made by a different plan: " + strings.Join(e.Fields, "; ")
}

// Unwrap makes a MismatchError match ErrState.
func (e *MismatchError) Unwrap() error { return ErrState }

// Diff compares a state's fingerprint (f) with a plan's (g).
func (f Fingerprint) Diff(g Fingerprint) error {
	var d []string
	add := func(name string, a, b any) {
		if a != b {
			d = append(d, fmt.Sprintf("%s: state %v, plan %v", name, a, b))
		}
	}
	add("seed", f.Seed, g.Seed)
	add("bucket_order", f.BucketOrder, g.BucketOrder)
	add("num_edge_chunks", f.NumEdgeChunks, g.NumEdgeChunks)
	add("workers", f.Workers, g.Workers)
	add("batch_size", f.BatchSize, g.BatchSize)
	add("eval_fraction", f.EvalFraction, g.EvalFraction)
	add("dynamic_relations", f.DynamicRelations, g.DynamicRelations)
	add("partitions", f.Partitions, g.Partitions)
	add("edge_sets", f.EdgeSets, g.EdgeSets)
	add("store", f.Store, g.Store)
	add("partition_buffer", f.PartitionBuffer, g.PartitionBuffer)
	if d == nil {
		return nil
	}
	return &MismatchError{Fields: d}
}

// Encode is the canonical encoding (one line, fields in fixed order).
func (s State) Encode() []byte {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // only plain fields: cannot fail
	}
	return append(b, '\n')
}

// rawState mirrors State with pointers, to tell a missing field from a zero.
type rawState struct {
	Version  *int `json:"version"`
	Position *struct {
		Epoch   *int `json:"epoch"`
		EdgeSet *int `json:"edge_set"`
		Chunk   *int `json:"chunk"`
		Index   *int `json:"index"`
		Worker  *int `json:"worker"`
		Batch   *int `json:"batch"`
	} `json:"position"`
	Fingerprint *struct {
		Seed             *uint64  `json:"seed"`
		BucketOrder      *string  `json:"bucket_order"`
		NumEdgeChunks    *int     `json:"num_edge_chunks"`
		Workers          *int     `json:"workers"`
		BatchSize        *int     `json:"batch_size"`
		EvalFraction     *float64 `json:"eval_fraction"`
		DynamicRelations *bool    `json:"dynamic_relations"`
		Partitions       *[2]int  `json:"partitions"`
		EdgeSets         *int     `json:"edge_sets"`
		Store            *string  `json:"store"`
		PartitionBuffer  *int     `json:"partition_buffer"`
	} `json:"fingerprint"`
}

// DecodeState parses a state. Unknown fields, missing fields, negative
// positions, a different version and trailing data are errors (ErrState).
func DecodeState(data []byte) (*State, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrState, fmt.Sprintf(format, a...))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var r rawState
	if err := dec.Decode(&r); err != nil {
		return nil, bad("%s", jsonmsg.Describe(data, err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, bad("data after the state object")
	}
	if r.Version == nil {
		return nil, bad("missing version")
	}
	if *r.Version != StateVersion {
		return nil, bad("version %d, this batchprep reads version %d", *r.Version, StateVersion)
	}
	if r.Position == nil || r.Fingerprint == nil {
		return nil, bad("missing position or fingerprint")
	}
	s := &State{Version: *r.Version}
	p, f := r.Position, r.Fingerprint
	ints := []struct {
		name string
		v    *int
		dst  *int
	}{
		{"position.epoch", p.Epoch, &s.Position.Epoch}, {"position.edge_set", p.EdgeSet, &s.Position.EdgeSet},
		{"position.chunk", p.Chunk, &s.Position.Chunk}, {"position.index", p.Index, &s.Position.Index},
		{"position.worker", p.Worker, &s.Position.Worker}, {"position.batch", p.Batch, &s.Position.Batch},
		{"fingerprint.num_edge_chunks", f.NumEdgeChunks, &s.Fingerprint.NumEdgeChunks},
		{"fingerprint.workers", f.Workers, &s.Fingerprint.Workers},
		{"fingerprint.batch_size", f.BatchSize, &s.Fingerprint.BatchSize},
		{"fingerprint.edge_sets", f.EdgeSets, &s.Fingerprint.EdgeSets},
	}
	for _, x := range ints {
		if x.v == nil {
			return nil, bad("missing %s", x.name)
		}
		if *x.v < 0 {
			return nil, bad("%s = %d is negative", x.name, *x.v)
		}
		*x.dst = *x.v
	}
	if f.Seed == nil || f.BucketOrder == nil || f.EvalFraction == nil || f.DynamicRelations == nil ||
		f.Partitions == nil || f.Store == nil {
		return nil, bad("fingerprint lacks one of seed, bucket_order, eval_fraction, dynamic_relations, partitions, store")
	}
	s.Fingerprint.Seed, s.Fingerprint.BucketOrder = *f.Seed, *f.BucketOrder
	s.Fingerprint.EvalFraction, s.Fingerprint.DynamicRelations = *f.EvalFraction, *f.DynamicRelations
	s.Fingerprint.Partitions, s.Fingerprint.Store = *f.Partitions, *f.Store
	if f.PartitionBuffer != nil {
		if *f.PartitionBuffer < 2 {
			return nil, bad("fingerprint.partition_buffer = %d: must be >= 2 when present", *f.PartitionBuffer)
		}
		s.Fingerprint.PartitionBuffer = *f.PartitionBuffer
	}
	return s, nil
}

// ReadStateFile reads and decodes a state file; errors name the file.
func ReadStateFile(path string) (*State, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	s, err := DecodeState(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// WriteStateFile writes s atomically: a temporary file in the same
// directory, fsync, rename, fsync of the directory.
func WriteStateFile(path string, s State) error {
	if err := atomicfile.Write(path, s.Encode(), 0o644); err != nil {
		return fmt.Errorf("plan: writing state %s: %w", path, err)
	}
	return nil
}
