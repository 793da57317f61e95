package config

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
)

// Load is LoadWith with the default LoadOptions and no deadline of its own
// beyond the Python timeout.
func Load(path string) (*Config, error) {
	return LoadWith(context.Background(), path, LoadOptions{})
}

// LoadWith reads the config file at path: TOML for a .toml extension, JSON
// for .json, a PBG Python config for .py, otherwise sniffed (a first
// non-blank byte '{' means JSON). A .py file is run by a Python interpreter
// (opts; this runs the file's code) that calls its
// get_torchbiggraph_config() and hands the dict back as JSON, which is
// then read as a JSON config (invariant 11). Defaults are applied and the
// result is validated (invariants 1-4). Relative paths in it are made
// relative to the config file's directory (invariant 6). Errors are *Error
// values naming the file and the key.
func LoadWith(ctx context.Context, path string, opts LoadOptions) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{File: path, Msg: err.Error(), Err: err}
	}
	format := ""
	switch strings.ToLower(filepath.Ext(path)) {
	case ".toml":
		format = "toml"
	case ".json":
		format = "json"
	case ".py":
		if data, err = loadPython(ctx, path, opts); err != nil {
			return nil, err
		}
		format = "json"
	default:
		if bytes.Contains(data, []byte("def get_torchbiggraph_config(")) {
			return nil, &Error{File: path, Msg: "defines get_torchbiggraph_config() as a PBG Python config does, but only a file named .py is run as Python: rename it"}
		}
	}
	c, err := Parse(data, format)
	if err != nil {
		var ce *Error
		if errors.As(err, &ce) && ce.File == "" {
			ce.File = path
		}
		return nil, err
	}
	c.ResolvePaths(filepath.Dir(path))
	return c, nil
}

// ResolvePaths makes the relative paths of c (entity_path, edge_paths,
// checkpoint_path, init_path) relative to dir, the directory of the config
// file they were written in (invariant 6). Absolute paths and empty ones
// stay as they are.
func (c *Config) ResolvePaths(dir string) {
	fix := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	c.EntityPath = fix(c.EntityPath)
	for i, p := range c.EdgePaths {
		c.EdgePaths[i] = fix(p)
	}
	c.CheckpointPath = fix(c.CheckpointPath)
	if c.InitPath != nil {
		p := fix(*c.InitPath)
		c.InitPath = &p
	}
}

// Parse decodes data as format "toml", "json" or "" (sniff), applies
// defaults and validates.
func Parse(data []byte, format string) (*Config, error) {
	if format == "" {
		format = "toml"
		if t := bytes.TrimLeft(data, " \t\r\n\ufeff"); len(t) > 0 && t[0] == '{' {
			format = "json"
		}
	}
	var m map[string]any
	switch format {
	case "json":
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			return nil, jsonError(data, err)
		}
		if _, err := dec.Token(); err != io.EOF {
			return nil, &Error{Msg: fmt.Sprintf("json: unexpected data after the top-level object at byte %d", dec.InputOffset())}
		}
		if m == nil {
			return nil, &Error{Msg: "json: the top level must be an object"}
		}
		if err := jsonDuplicateKey(data); err != nil {
			return nil, err
		}
	case "toml":
		if _, err := toml.Decode(string(data), &m); err != nil {
			var pe toml.ParseError
			if errors.As(err, &pe) {
				col := tomlColumn(data, pe)
				return nil, &Error{Msg: fmt.Sprintf("toml: line %d, column %d: %s", pe.Position.Line, col, pe.Message), Err: err}
			}
			return nil, &Error{Msg: "toml: " + err.Error(), Err: err}
		}
	default:
		return nil, &Error{Msg: fmt.Sprintf("unknown format %q (want toml or json)", format)}
	}
	return fromMap(m)
}

// fromMap checks the generic document against the schema, then decodes it
// over the defaults and validates the result.
func fromMap(m map[string]any) (*Config, error) {
	if err := checkTable("", m, topKeys); err != nil {
		return nil, err
	}
	// After checkTable every value has the type its field wants, so this
	// round trip through JSON cannot fail on types.
	enc, err := json.Marshal(m)
	if err != nil {
		return nil, &Error{Msg: "internal: " + err.Error(), Err: err}
	}
	c := Defaults()
	if err := json.Unmarshal(enc, c); err != nil {
		return nil, &Error{Msg: "internal: " + err.Error(), Err: err}
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// tomlColumn returns the column of a TOML error within its line. The toml
// package reports a duplicate key at the end of its value, which can be
// past the end of the line; the column is then that of the key.
func tomlColumn(data []byte, pe toml.ParseError) int {
	lines := bytes.Split(data, []byte{'\n'})
	n := pe.Position.Line - 1
	if n < 0 || n >= len(lines) {
		return pe.Position.Col
	}
	line := bytes.TrimRight(lines[n], "\r")
	if pe.Position.Col >= 1 && pe.Position.Col <= len(line) {
		return pe.Position.Col
	}
	if i := strings.Index(pe.Message, "'"); i >= 0 {
		if j := strings.Index(pe.Message[i+1:], "'"); j >= 0 {
			key := pe.Message[i+1 : i+1+j]
			last := key[strings.LastIndexByte(key, '.')+1:]
			if k := bytes.Index(line, []byte(last)); k >= 0 {
				return k + 1
			}
		}
	}
	return max(1, min(pe.Position.Col, len(line)))
}

// jsonError turns a JSON syntax error into an *Error with line and column.
func jsonError(data []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line, col := lineCol(data, se.Offset)
		return &Error{Msg: fmt.Sprintf("json: line %d, column %d: %v", line, col, se), Err: err}
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return &Error{Msg: "json: the top level must be an object", Err: err}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		line, col := lineCol(data, int64(len(data))+1)
		return &Error{Msg: fmt.Sprintf("json: line %d, column %d: unexpected end of file (an object, array or string is not closed)", line, col), Err: err}
	}
	return &Error{Msg: "json: " + err.Error(), Err: err}
}

// jsonDuplicateKey refuses a key given twice in one JSON object, as TOML
// does (encoding/json would keep the last value silently). The error names
// the key's path and the line and column of its second occurrence. data is
// known to be valid JSON.
func jsonDuplicateKey(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	errStop := errors.New("stop")
	var walk func(path string) error
	walk = func(path string) error {
		tok, err := dec.Token()
		if err != nil {
			return errStop
		}
		switch tok {
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				if err := walk(fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		case json.Delim('{'):
			first := map[string]int64{}
			for dec.More() {
				before := dec.InputOffset()
				tok, err := dec.Token()
				k, ok := tok.(string)
				if err != nil || !ok {
					return errStop
				}
				// The key's quote follows the previous token's end, after
				// blanks and a comma.
				off := before + int64(bytes.IndexByte(data[before:], '"'))
				if f, dup := first[k]; dup {
					line, col := lineCol(data, off+1)
					fl, fc := lineCol(data, f+1)
					return &Error{Key: join(path, k), Msg: fmt.Sprintf("json: line %d, column %d: key %q is given twice in one object (first at line %d, column %d)", line, col, k, fl, fc)}
				}
				first[k] = off
				if err := walk(join(path, k)); err != nil {
					return err
				}
			}
		default:
			return nil // a scalar
		}
		if _, err := dec.Token(); err != nil { // the closing ] or }
			return errStop
		}
		return nil
	}
	if err := walk(""); err != nil && err != errStop {
		return err
	}
	return nil
}

func lineCol(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	if off > 0 {
		off-- // SyntaxError.Offset is just past the bad byte
	}
	before := data[:off]
	line = bytes.Count(before, []byte{'\n'}) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}
