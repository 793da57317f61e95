package serve

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/batchprep/batchprep/corpus/ctf"
	"github.com/batchprep/batchprep/corpus/file"
	"github.com/batchprep/batchprep/corpus/parquet"
	"github.com/batchprep/batchprep/internal/objstore"
)

// acquire opens (or shares) the indexed reader of the corpus file path,
// which the request names in field (invariants 3, 4, 10). The file is
// checked to be a regular file under the data directories, and the file so
// opened is the one indexed (the path is not opened again). A call
// cancelled while the file is being indexed returns at once, and the pass
// stops unless another call waits for it. Each file of a mixture is
// acquired this way, with the same checks as a single corpus.
// An object (s3://BUCKET/KEY) is acquired by acquireObject instead; exact
// is objstore.Options.Exact for it (a rank that reads only its own chunks).
func (s *Server) acquire(ctx context.Context, field, path string, cfg ctf.Config, exact bool) (file.Reader, func(), error) {
	if objstore.IsURL(path) {
		return s.acquireObject(ctx, field, path, cfg, exact)
	}
	f, real, err := s.root.openRegular(field, path)
	if err != nil {
		return nil, nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, refused(field, path)
	}
	r, release, err := s.readers.acquire(ctx, fileBlob(f, real, info), cfg)
	return s.acquired(ctx, field, path, r, release, err)
}

// acquired is the answer to a call that acquired a reader (r, release) or
// met err.
func (s *Server) acquired(ctx context.Context, field, path string, r file.Reader, release func(), err error) (file.Reader, func(), error) {
	switch {
	case err == nil:
		return r, release, nil
	case ctx.Err() != nil:
		return nil, nil, status.FromContextError(ctx.Err()).Err()
	case errors.Is(err, errStopping):
		return nil, nil, status.Error(codes.Unavailable, "the server is stopping")
	}
	return nil, nil, s.dataError(codes.InvalidArgument, field, path, err)
}

// dataError turns an error met reading a client's file into the status
// sent to the client. The server's log gets the whole error; the client
// gets the field, the file as it named it, the line and column, and the
// reader's explanation only when it quotes nothing from the file, so that
// an error never passes file contents on (invariant 10).
func (s *Server) dataError(code codes.Code, field, file string, err error) error {
	s.opts.Logf("%s %q: %v", field, file, err)
	var oe *objstore.Error
	if errors.As(err, &oe) {
		return objectStatus(field, file, oe)
	}
	prefix := fmt.Sprintf("%s: %q", field, file)
	var be *ctf.BudgetError
	if errors.As(err, &be) {
		prefix += fmt.Sprintf(": more than %d bad sequences (max_errors); the last", be.MaxErrors)
		err = be.Last
	}
	var ce *ctf.Error
	if errors.As(err, &ce) && ce != nil {
		msg := "the data cannot be read here"
		if quotesNothing(ce.Msg) {
			msg = ce.Msg
		}
		return status.Errorf(code, "%s: line %d, column %d: %s", prefix, ce.Line, ce.Col, msg)
	}
	var pe *parquet.Error
	if errors.As(err, &pe) && pe != nil {
		msg := "the data cannot be read here"
		if quotesNothing(pe.Msg) {
			msg = pe.Msg
		}
		where := ""
		if pe.RowGroup >= 0 {
			where = fmt.Sprintf("row group %d, row %d, ", pe.RowGroup, pe.Row)
		}
		if pe.Column != "" {
			where += fmt.Sprintf("column %s, ", pe.Column)
		}
		return status.Errorf(code, "%s: %s%s", prefix, where, msg)
	}
	msg := strings.TrimPrefix(err.Error(), "ctf: ")
	if !quotesNothing(msg) || objstore.IsURL(file) && namesPath(msg, file) {
		msg = "the file cannot be read as the request asks (the server's log has the details)"
	}
	return status.Errorf(code, "%s: %s", prefix, msg)
}

// quotesNothing reports whether msg holds no quoted text (the form in
// which messages cite what they found in a file).
func quotesNothing(msg string) bool {
	return !strings.ContainsAny(msg, "\"'`")
}
