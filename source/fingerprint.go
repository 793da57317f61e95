package source

import (
	"encoding/binary"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/batchprep/batchprep/corpus"
)

// Fingerprinter is implemented by corpora that can name their identity (for
// a file: path, size, modification time, a hash of its index). The source
// copies each entry into the state fingerprint as "corpus.<key>". Corpora
// without it are identified by their layout alone.
type Fingerprinter interface {
	Fingerprint() map[string]string
}

// fingerprint lists everything that changes the order or the epoch
// boundaries (invariant 8): corpus identity and layout (which covers the
// chunking), stream setup, randomizer kind, seed, window, epoch size. Not the
// schedule, CutAtSweep, workers or rank.
func fingerprint(src corpus.Source, cfg *Config) map[string]string {
	fp := map[string]string{}
	if f, ok := src.(Fingerprinter); ok {
		for k, v := range f.Fingerprint() {
			fp["corpus."+k] = v
		}
	}
	l := src.Layout()
	fp["layout"] = layoutHash(l)
	fp["sequences"] = strconv.Itoa(l.NumSequences())
	fp["chunks"] = strconv.Itoa(l.NumChunks())
	fp["sweep_samples"] = strconv.FormatUint(l.TotalSamples(), 10)
	var streams []string
	for _, s := range src.Streams() {
		d := s.Name + ":" + strconv.Itoa(s.Dim)
		if s.Sparse {
			d += ":sparse"
		}
		streams = append(streams, d)
	}
	fp["streams"] = strings.Join(streams, ",")
	fp["randomize"] = cfg.Randomize.Kind
	fp["seed"] = strconv.FormatUint(cfg.Randomize.Seed, 10)
	if cfg.Randomize.WindowSamples > 0 {
		fp["window"] = strconv.FormatUint(cfg.Randomize.WindowSamples, 10) + " samples"
	} else {
		fp["window"] = strconv.Itoa(cfg.Randomize.WindowChunks) + " chunks"
	}
	fp["epoch_size"] = cfg.EpochSize.String()
	return fp
}

// layoutHash is an FNV-64a hash of the chunk boundaries and of every
// sequence's sample and label counts.
func layoutHash(l *corpus.Layout) string {
	h := fnv.New64a()
	buf := make([]byte, 0, 4096)
	flush := func() { h.Write(buf); buf = buf[:0] }
	put := func(v uint64) {
		if len(buf)+8 > cap(buf) {
			flush()
		}
		buf = binary.LittleEndian.AppendUint64(buf, v)
	}
	put(uint64(len(l.ChunkStart)))
	for _, c := range l.ChunkStart {
		put(uint64(c))
	}
	put(uint64(len(l.Samples)))
	for i, s := range l.Samples {
		put(uint64(s)<<32 | uint64(l.LabelCount(i)))
	}
	flush()
	return strconv.FormatUint(h.Sum64(), 16)
}
