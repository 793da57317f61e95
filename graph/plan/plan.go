package plan

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/graph/bucket"
	"github.com/batchprep/batchprep/internal/mix"
)

// Fingerprinter is implemented by stores that can name their content
// (edgestore.Store). For other readers the plan hashes the bucket sizes.
type Fingerprinter interface{ Fingerprint() string }

// Plan is the schedule of a graph over some Options. It is immutable and
// safe for concurrent use; iterators hold the mutable part.
type Plan struct {
	opts    Options
	r       graph.Reader
	l, rr   int
	sets    int
	chunks  int
	largest int
	// maxChunk bounds every chunk's size: iterators size their
	// buffers to it once.
	maxChunk int
	total    int64
	store    string
	// src maps the plan's edge sets to the store's (Options.EdgeSets).
	src []int
}

// New checks o and the store's shape, resolves num_edge_chunks and returns
// the plan.
func New(r graph.Reader, o Options) (*Plan, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	p := &Plan{opts: o, r: r}
	p.l, p.rr = r.Partitions()
	if p.l < 1 || p.rr < 1 {
		return nil, fmt.Errorf("plan: store has %dx%d partitions", p.l, p.rr)
	}
	if r.NumEdgeSets() < 1 {
		return nil, fmt.Errorf("plan: store has no edge set")
	}
	selected := o.EdgeSets != nil
	for s := range r.NumEdgeSets() {
		p.src = append(p.src, s)
	}
	if selected {
		p.src = p.src[:0]
		for _, s := range o.EdgeSets {
			if s < 0 || s >= r.NumEdgeSets() {
				return nil, fmt.Errorf("plan: edge set %d: the store has %d", s, r.NumEdgeSets())
			}
			p.src = append(p.src, s)
		}
	}
	p.sets = len(p.src)
	h := sha256.New()
	var buf [8]byte
	for s := 0; s < p.sets; s++ {
		for i := 0; i < p.l; i++ {
			for j := 0; j < p.rr; j++ {
				n, err := r.NumEdges(p.src[s], graph.Bucket{Lhs: i, Rhs: j})
				if err != nil {
					return nil, fmt.Errorf("plan: edge set %d bucket (%d,%d): %w", s, i, j, err)
				}
				if n > 1<<32-1 {
					return nil, fmt.Errorf("plan: edge set %d bucket (%d,%d) has %d edges; at most 2^32-1 per bucket", s, i, j, n)
				}
				p.largest = max(p.largest, n)
				p.total += int64(n)
				binary.LittleEndian.PutUint64(buf[:], uint64(n))
				h.Write(buf[:])
			}
		}
	}
	p.chunks = o.NumEdgeChunks
	if p.chunks == 0 {
		p.chunks = NumChunksFor(p.largest, o.MaxEdgesPerChunk)
	}
	p.maxChunk = (p.largest + p.chunks - 1) / p.chunks
	if f, ok := r.(Fingerprinter); ok {
		p.store = f.Fingerprint()
		if selected {
			// A state of a plan over other edge sets of the same store
			// must not resume this one.
			p.store += fmt.Sprintf("+edge-sets%v", p.src)
		}
	} else {
		p.store = "sizes-sha256:" + hex.EncodeToString(h.Sum(nil))[:32]
	}
	return p, nil
}

// Options returns the plan's options.
func (p *Plan) Options() Options { return p.opts }

// NumChunks is the resolved num_edge_chunks.
func (p *Plan) NumChunks() int { return p.chunks }

// EdgesPerEpoch is the number of stored edges over the edge sets the plan
// walks: what one epoch visits (trained or held out).
func (p *Plan) EdgesPerEpoch() int64 { return p.total }

// Shape returns the number of lhs and rhs partitions.
func (p *Plan) Shape() (lhs, rhs int) { return p.l, p.rr }

// NumEdgeSets returns the number of edge sets the plan walks.
func (p *Plan) NumEdgeSets() int { return p.sets }

// StoreEdgeSet returns the store's index of the plan's edge set s.
func (p *Plan) StoreEdgeSet(s int) int { return p.src[s] }

// Order returns the bucket order of pass (epoch, set, chunk).
func (p *Plan) Order(epoch, set, chunk int) []graph.Bucket {
	rng := mix.Rand(p.opts.Seed, tagOrder, uint64(epoch), uint64(set), uint64(chunk))
	o, err := bucket.MakeBuffered(p.opts.BucketOrder, p.l, p.rr, p.opts.Buffer(), rng)
	if err != nil {
		panic(err) // Validate checked the name and New the shape
	}
	return o
}

// Fingerprint returns what a State made by this plan records.
func (p *Plan) Fingerprint() Fingerprint {
	return Fingerprint{
		Seed: p.opts.Seed, BucketOrder: p.opts.BucketOrder, NumEdgeChunks: p.chunks,
		Workers: p.opts.Workers, BatchSize: p.opts.BatchSize, EvalFraction: p.opts.EvalFraction,
		DynamicRelations: p.opts.DynamicRelations, Partitions: [2]int{p.l, p.rr},
		EdgeSets: p.sets, Store: p.store, PartitionBuffer: p.orderBuffer(),
	}
}

// orderBuffer is the buffer size the bucket order depends on: c for the
// buffer order, 0 (none) for the others.
func (p *Plan) orderBuffer() int {
	if p.opts.BucketOrder == bucket.Buffer {
		return p.opts.Buffer()
	}
	return 0
}

// Start returns the state of a plan that has not begun.
func (p *Plan) Start() State {
	return State{Version: StateVersion, Fingerprint: p.Fingerprint()}
}
