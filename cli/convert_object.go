package cli

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"

	"github.com/batchprep/batchprep/corpus/file"
	"github.com/batchprep/batchprep/internal/objstore"
)

// convertOutput is where convert writes: OUT itself, or, when OUT is an
// object, a file in a temporary directory that upload then puts as OUT,
// so a failed conversion leaves no object.
type convertOutput struct {
	url  string // OUT when it is an object, else ""
	path string // the local file the conversion writes
	dir  string // the temporary directory, removed by close
}

func newConvertOutput(out string) (*convertOutput, error) {
	if !file.IsObject(out) {
		return &convertOutput{path: out}, nil
	}
	_, key, err := objstore.ParseURL(out)
	if err != nil {
		return nil, usagef("OUT: %v", err)
	}
	dir, err := os.MkdirTemp("", "batchprep-convert-")
	if err != nil {
		return nil, fmt.Errorf("%s: a local file to write before the upload: %w", out, err)
	}
	return &convertOutput{url: out, path: filepath.Join(dir, path.Base(key)), dir: dir}, nil
}

// upload puts the written file as the object OUT (nothing for a local OUT).
func (o *convertOutput) upload(ctx context.Context, opt objstore.Options) error {
	if o.url == "" {
		return nil
	}
	_, err := objstore.Put(ctx, o.url, o.path, opt)
	return err
}

// close removes the temporary directory, if any.
func (o *convertOutput) close() {
	if o.dir != "" {
		os.RemoveAll(o.dir)
	}
}
