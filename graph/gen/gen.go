package gen

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"strconv"

	"github.com/batchprep/batchprep/internal/alias"
	"github.com/batchprep/batchprep/internal/mix"
)

// Params describe a generated graph. The zero value of Communities (or 1)
// means no communities.
type Params struct {
	Entities    int     // entities e0 .. e<Entities-1>
	Edges       int     // edges (lines)
	Relations   int     // relations r0 .. r<Relations-1>, uniform
	Zipf        float64 // rank exponent: entity i has weight (i+1)^-Zipf; 0 = uniform
	Communities int     // planted communities (entity i in community i mod Communities)
	PIn         float64 // fraction of edges whose rhs is drawn inside the lhs's community
	Seed        uint64
}

// maxEntities keeps the alias tables' integer arithmetic inside 64 bits.
const maxEntities = math.MaxUint32

// weightUnit is the weight of the rank-1 entity; the others are rounded to
// multiples of 1 (at least 1).
const weightUnit = 1 << 30

// Validate checks the parameters.
func (p Params) Validate() error {
	switch {
	case p.Entities < 1 || p.Entities > maxEntities:
		return fmt.Errorf("gen: entities %d: need 1 .. %d", p.Entities, maxEntities)
	case p.Edges < 0:
		return fmt.Errorf("gen: edges %d: need >= 0", p.Edges)
	case p.Relations < 1:
		return fmt.Errorf("gen: relations %d: need >= 1", p.Relations)
	case !(p.Zipf >= 0 && p.Zipf <= 8):
		return fmt.Errorf("gen: zipf %v: need 0 .. 8", p.Zipf)
	case p.Communities < 0 || p.Communities > p.Entities:
		return fmt.Errorf("gen: communities %d: need 0 .. entities (%d)", p.Communities, p.Entities)
	case !(p.PIn >= 0 && p.PIn <= 1):
		return fmt.Errorf("gen: p_in %v: need 0 .. 1", p.PIn)
	case p.PIn > 0 && p.Communities < 2:
		return errors.New("gen: p_in needs communities >= 2")
	}
	return nil
}

// Community returns the community of entity i (0 without communities).
func (p Params) Community(i int) int {
	if p.Communities < 2 {
		return 0
	}
	return i % p.Communities
}

// weight is entity i's sampling weight.
func (p Params) weight(i int) uint64 {
	if p.Zipf == 0 {
		return 1
	}
	w := uint64(weightUnit * math.Pow(float64(i+1), -p.Zipf))
	return max(w, 1)
}

// sampler holds the alias tables of a graph.
type sampler struct {
	p     Params
	all   *alias.Table
	comm  []*alias.Table // per community; column j is entity c + j*C
	inCut uint64         // a draw below inCut puts the rhs in the community
}

func newSampler(p Params) *sampler {
	s := &sampler{p: p}
	w := make([]uint64, p.Entities)
	for i := range w {
		w[i] = p.weight(i)
	}
	s.all = alias.New(w)
	if p.Communities >= 2 {
		C := p.Communities
		s.comm = make([]*alias.Table, C)
		cw := make([]uint64, 0, p.Entities/C+1)
		for c := 0; c < C; c++ {
			cw = cw[:0]
			for i := c; i < p.Entities; i += C {
				cw = append(cw, w[i])
			}
			s.comm[c] = alias.New(cw)
		}
		if p.PIn >= 1 {
			s.inCut = math.MaxUint64
		} else {
			s.inCut = uint64(p.PIn * (1 << 63) * 2)
		}
	}
	return s
}

// maxRedraws bounds the redraws of an rhs equal to its lhs.
const maxRedraws = 16

// Generate calls emit for each edge in order: lhs and rhs entity numbers
// and the relation number. It stops at emit's first error.
func Generate(p Params, emit func(lhs, rel, rhs uint32) error) error {
	if err := p.Validate(); err != nil {
		return err
	}
	s := newSampler(p)
	r := mix.PCG(p.Seed, 0x67656e2d706c) // "gen-pl"
	C := uint32(max(p.Communities, 1))
	rels := uint64(p.Relations)
	for range p.Edges {
		lhs := s.all.Draw(r.Uint64())
		inside := s.comm != nil && r.Uint64() < s.inCut
		var rhs uint32
		for try := 0; try < maxRedraws; try++ {
			if inside {
				c := lhs % C
				rhs = c + s.comm[c].Draw(r.Uint64())*C
			} else {
				rhs = s.all.Draw(r.Uint64())
			}
			if rhs != lhs {
				break
			}
		}
		var rel uint32
		if rels > 1 {
			rel = uint32(boundedDraw(r.Uint64(), rels))
		}
		if err := emit(lhs, rel, rhs); err != nil {
			return err
		}
	}
	return nil
}

// boundedDraw maps x to [0, n) by multiplication (a bias below n/2^64).
func boundedDraw(x, n uint64) uint64 {
	hi, _ := bits.Mul64(x, n)
	return hi
}

// WriteTSV writes the graph of p as lines "e<lhs>\tr<rel>\te<rhs>\n" (the
// relation in column 1: import it with --rel-col 1).
func WriteTSV(w io.Writer, p Params) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	line := make([]byte, 0, 64)
	err := Generate(p, func(lhs, rel, rhs uint32) error {
		line = append(line[:0], 'e')
		line = strconv.AppendUint(line, uint64(lhs), 10)
		line = append(line, '\t', 'r')
		line = strconv.AppendUint(line, uint64(rel), 10)
		line = append(line, '\t', 'e')
		line = strconv.AppendUint(line, uint64(rhs), 10)
		line = append(line, '\n')
		_, err := bw.Write(line)
		return err
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}
