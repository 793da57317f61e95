package serve

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/batchprep/batchprep/graph/config"
)

// maxConfigBytes bounds a graph config file read for a request.
const maxConfigBytes = 16 << 20

// loadGraphConfig reads the graph config a request names, as config.Load
// does, with every path confined to the data directories (invariant 10):
// the config file, the entity and edge directories it names (and the
// files in them) and its checkpoint and init paths. Errors name the key
// and the position, never the file's text.
func (s *Server) loadGraphConfig(p string) (*config.Config, error) {
	f, real, err := s.root.openRegular("config", p)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	f.Close()
	if err != nil {
		s.opts.Logf("config %q: %v", p, err)
		return nil, refused("config", p)
	}
	if len(data) > maxConfigBytes {
		return nil, status.Errorf(codes.InvalidArgument, "config: %q is larger than %d bytes: not a graph config", p, maxConfigBytes)
	}
	format := ""
	switch strings.ToLower(filepath.Ext(real)) {
	case ".py":
		// Running a client's file would run its code on this host.
		return nil, status.Errorf(codes.InvalidArgument, "config: %q is a Python config; the server does not run Python configs: convert it to JSON (batchprep accepts it with --config on the command line) and name that", p)
	case ".toml":
		format = "toml"
	case ".json":
		format = "json"
	}
	cfg, err := config.Parse(data, format)
	if err != nil {
		s.opts.Logf("config %q: %v", p, err)
		return nil, status.Error(codes.InvalidArgument, configMessage(p, err))
	}
	cfg.ResolvePaths(filepath.Dir(real))
	if cfg.EntityPath, err = s.storeDir("config: entity_path", cfg.EntityPath); err != nil {
		return nil, err
	}
	for i := range cfg.EdgePaths {
		if cfg.EdgePaths[i], err = s.storeDir(fmt.Sprintf("config: edge_paths[%d]", i), cfg.EdgePaths[i]); err != nil {
			return nil, err
		}
	}
	// Not read by a plan, but a config naming places outside the data
	// directories is not served.
	for key, q := range map[string]*string{"checkpoint_path": &cfg.CheckpointPath, "init_path": cfg.InitPath} {
		if q != nil && *q != "" && !s.root.inAny(filepath.Clean(*q)) {
			return nil, refused("config: "+key, *q)
		}
	}
	return cfg, nil
}

// storeDir checks a store directory and the entries in it: links must stay
// under the data directories and nothing may be a FIFO, device or socket
// (the store reads its files by name).
func (s *Server) storeDir(field, p string) (string, error) {
	real, err := s.root.dirUnder(field, p)
	if err != nil {
		return "", err
	}
	entries, err := os.ReadDir(real)
	if err != nil {
		return "", refused(field, p)
	}
	for _, e := range entries {
		q := filepath.Join(p, e.Name())
		info, err := e.Info()
		if err != nil {
			continue // gone meanwhile
		}
		if info.Mode()&os.ModeSymlink != 0 {
			if _, info, err = s.root.resolve(field, q); err != nil {
				return "", err
			}
		}
		if !info.Mode().IsRegular() && !info.IsDir() {
			return "", needRegular(field, q, info)
		}
	}
	return real, nil
}

var linePos = regexp.MustCompile(`line \d+, column \d+`)

// configMessage renders a config error for a client: the key and the
// explanation when it quotes nothing from the file, the line and column of
// a syntax error, never the text found there.
func configMessage(p string, err error) string {
	var ce *config.Error
	if !errors.As(err, &ce) {
		return fmt.Sprintf("config: %q: not a graph config", p)
	}
	if ce.Key != "" {
		// A key is named when it starts with a key of the schema: another
		// one is text of the file.
		key := ce.Key
		top := key[:strings.IndexAny(key+".[", ".[")]
		if len(key) > 200 || !quotesNothing(key) || !slices.Contains(config.KnownKeys(), top) {
			key = "a key not in the schema (the server's log names it)"
		}
		msg := "bad value"
		if quotesNothing(ce.Msg) {
			msg = ce.Msg
		}
		return fmt.Sprintf("config: %q: %s: %s", p, key, msg)
	}
	what := "not a graph config"
	switch kind, _, _ := strings.Cut(ce.Msg, ":"); kind {
	case "toml", "json":
		what = "not valid " + strings.ToUpper(kind)
	}
	if pos := linePos.FindString(ce.Msg); pos != "" {
		return fmt.Sprintf("config: %q: %s: %s", p, pos, what)
	}
	return fmt.Sprintf("config: %q: %s", p, what)
}
