//go:build !linux

package direct

import (
	"errors"
	"os"
)

// openDirect fails: direct reads are implemented on Linux only, and a
// caller reads through the page cache instead.
func openDirect(string) (*os.File, error) {
	return nil, errors.New("direct: reads around the page cache are implemented on Linux only")
}
