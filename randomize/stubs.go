package randomize

import (
	"errors"

	"github.com/batchprep/batchprep/corpus"
)

// Placeholder until window.go lands.
func newWindow(cfg Config, l *corpus.Layout) (Randomizer, error) {
	return nil, errors.New("randomize: window is not implemented yet")
}
