package source

import (
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
	fp["layout"] = l.Hash()
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
