package randomize

import (
	"errors"

	"github.com/batchprep/batchprep/corpus"
)

// Placeholders until cntk.go and window.go land.
func newCNTK(cfg Config, l *corpus.Layout) (Randomizer, error) {
	return nil, errors.New("randomize: cntk is not implemented yet")
}
func newWindow(cfg Config, l *corpus.Layout) (Randomizer, error) {
	return nil, errors.New("randomize: window is not implemented yet")
}
