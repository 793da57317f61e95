package serve

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/file"
	"github.com/batchprep/batchprep/corpus/mixture"
	"github.com/batchprep/batchprep/corpus/source"
	"github.com/batchprep/batchprep/internal/ordered"
)

// minibatch is one minibatch a call sends: a source's minibatch and, for a
// mixture (corpora > 0), each sequence's corpus, its index in the request's
// files (mixture.Minibatch's Corpus and SkippedCorpus).
type minibatch struct {
	*source.Minibatch
	corpora               int // 0 for one corpus
	corpus, skippedCorpus []int
}

// timeline is what a call reads its minibatches from: one corpus's
// source.Source or a mixture.Mixture, with the same state, resume and
// seek semantics.
type timeline interface {
	positioned
	// next returns the next minibatch: at most k samples when k > 0, else
	// the schedule's size. It is valid until the next call.
	next(k int) (minibatch, error)
	Restore(st source.State) error
	Seek(p uint64) error
}

// single is the timeline of one corpus.
type single struct{ *source.Source }

func (s single) next(k int) (minibatch, error) {
	var mb *source.Minibatch
	var err error
	if k > 0 {
		mb, err = s.NextK(k)
	} else {
		mb, err = s.Next()
	}
	return minibatch{Minibatch: mb}, err
}

// mixed is the timeline of a mixture.
type mixed struct{ *mixture.Mixture }

func (m mixed) next(k int) (minibatch, error) {
	var mb *mixture.Minibatch
	var err error
	if k > 0 {
		mb, err = m.NextK(k)
	} else {
		mb, err = m.Next()
	}
	if err != nil {
		return minibatch{}, err
	}
	return minibatch{Minibatch: &mb.Minibatch, corpora: m.Corpora(), corpus: mb.Corpus, skippedCorpus: mb.SkippedCorpus}, nil
}

// fileField is the request field that names corpus i: files for one
// corpus, files[i] in a mixture.
func (setup *sequenceSetup) fileField(i int) string {
	if setup.weights == nil {
		return "files"
	}
	return fmt.Sprintf("files[%d]", i)
}

// openTimeline opens the call's corpus, or each corpus of its mixture, as
// a single corpus is opened (the data root's checks and the reader cache,
// invariants 3 and 10), each with its own error budget reporting to diag,
// and builds the source or the mixture. It refuses windows past the limit
// (invariant 11). close releases everything.
func (s *Server) openTimeline(ctx context.Context, setup *sequenceSetup, diag *diagnostics) (_ timeline, _ func(), err error) {
	var releases []func()
	closeAll := func() {
		for _, r := range releases {
			r()
		}
	}
	defer func() {
		if err != nil {
			closeAll()
		}
	}()
	// A mixture's Parquet objects are acquired at once, the others one at a
	// time beside them (file.OpensAtOnce). Sessions start in order, so the
	// call's warnings read as if the corpora had opened in turn.
	srcs := make([]corpus.Source, len(setup.files))
	type acquired struct {
		r       file.Reader
		release func()
	}
	var serial sync.Mutex
	ordered.Open(ctx, len(setup.files), file.MixOpens, func(ctx context.Context, i int) (acquired, error) {
		path := setup.files[i]
		if !file.OpensAtOnce(path) {
			serial.Lock()
			defer serial.Unlock()
		}
		r, release, err := s.acquire(ctx, setup.fileField(i), path, setup.built.CTF, setup.built.Source.SplitsChunks())
		return acquired{r, release}, err
	}, func(i int, a acquired, aerr error) bool {
		if err = aerr; err != nil {
			return false
		}
		releases = append(releases, a.release)
		// The call reads the shared index with its own error budget, as
		// `batchprep read` would: other calls on the file neither spend it
		// nor hide a chunk's warnings from it.
		path := setup.files[i]
		warn := s.corpusWarn(setup.fileField(i), path, diag.warn)
		if srcs[i], err = a.r.Session(setup.built.CTF.MaxErrors, warn); err != nil {
			err = s.dataError(codes.InvalidArgument, setup.fileField(i), path, err)
			return false
		}
		return true
	}, func(a acquired) { a.release() })
	if err != nil {
		return nil, nil, err
	}
	if setup.weights == nil {
		src, err := source.New(srcs[0], setup.built.Source)
		if err != nil {
			return nil, nil, s.dataError(codes.InvalidArgument, "files", setup.file, err)
		}
		releases = append([]func(){func() { src.Close() }}, releases...)
		if err := s.checkWindow(setup, srcs, []int{src.ResidentChunks()}); err != nil {
			return nil, nil, err
		}
		return single{src}, closeAll, nil
	}
	corpora := make([]mixture.Corpus, len(srcs))
	for i, src := range srcs {
		corpora[i] = mixture.Corpus{Source: src, Weight: setup.weights[i], Name: setup.files[i]}
	}
	mx, err := mixture.New(corpora, setup.built.Source)
	if err != nil {
		return nil, nil, s.readError(codes.InvalidArgument, setup, err)
	}
	releases = append([]func(){func() { mx.Close() }}, releases...)
	if err := s.checkWindow(setup, srcs, mx.ResidentChunks()); err != nil {
		return nil, nil, err
	}
	return mixed{mx}, closeAll, nil
}

// readError is dataError for an error of the call's source or mixture: a
// mixture's corpus error names that corpus's field and file (files[k]);
// an error of the mixture itself (corpora that declare different streams)
// names files, and quotes only what the request holds (its paths and
// stream names).
func (s *Server) readError(code codes.Code, setup *sequenceSetup, err error) error {
	if setup.weights == nil {
		return s.dataError(code, "files", setup.file, err)
	}
	var ce *mixture.CorpusError
	if errors.As(err, &ce) && ce.Corpus >= 0 && ce.Corpus < len(setup.files) {
		return s.dataError(code, setup.fileField(ce.Corpus), setup.files[ce.Corpus], err)
	}
	s.opts.Logf("files: %v", err)
	return status.Errorf(code, "files: %v", err)
}
