package pbg

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// InitOptions are the choices of a run started from a PBG checkpoint.
type InitOptions struct {
	// AllowUnmatched lets the store's entities that the checkpoint does
	// not name start at random; without it they are an error.
	AllowUnmatched bool
	// ConfigDir is the directory of the run's config file: a relative
	// entity_path in the checkpoint's config.json is looked for there too.
	ConfigDir string
}

// TypeMatch counts, for one entity type, the store's entities and how
// many of them the checkpoint holds a row for.
type TypeMatch struct {
	Type       string
	Store      int // entities in the store
	Matched    int // of those, found by name in the checkpoint
	Checkpoint int // entities the checkpoint names
}

// InitReport says where a run starts from (invariant 6).
type InitReport struct {
	Dir      string // the checkpoint directory
	Version  int    // N of its .v{N}.h5 files
	NamesDir string // where its entity names were read
	Types    []TypeMatch
}

// Matched and Store are the totals over the types.
func (r *InitReport) Matched() (matched, store, checkpoint int) {
	for _, t := range r.Types {
		matched, store, checkpoint = matched+t.Matched, store+t.Store, checkpoint+t.Checkpoint
	}
	return
}

// UnmatchedError is OpenInit's refusal of a store with entities the
// checkpoint does not name (InitOptions.AllowUnmatched lifts it).
type UnmatchedError struct{ msg string }

func (e *UnmatchedError) Error() string { return e.msg }

// unmatched marks a store row the checkpoint has no row for.
const unmatched = -1

// rowSource packs a checkpoint row: its partition in the high 32 bits,
// its offset in the low ones.
func rowSource(part, off int) int64 { return int64(part)<<32 | int64(off) }

// namesCandidates lists, in order, the directories where the names of the
// checkpoint in dir may be: the entity_path its config.json names (as
// written when absolute; else below the directory the checkpoint_path of
// the same config.json was relative to, the working directory and the
// run's config directory), then dir itself (export --format pbg writes
// the names beside the checkpoint).
func namesCandidates(dir, configDir string) ([]string, error) {
	var out []string
	add := func(p string) {
		for _, q := range out {
			if q == p {
				return
			}
		}
		out = append(out, p)
	}
	path := filepath.Join(dir, "config.json")
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("pbg: init_path: %w", err)
	}
	if err == nil {
		var c struct {
			EntityPath     string `json:"entity_path"`
			CheckpointPath string `json:"checkpoint_path"`
		}
		if err := json.Unmarshal(b, &c); err != nil {
			return nil, fmt.Errorf("pbg: init_path: %s: %v", path, jsonMessage(err))
		}
		if ep := c.EntityPath; ep != "" {
			if filepath.IsAbs(ep) {
				add(filepath.Clean(ep))
			} else {
				if root, ok := runRoot(dir, c.CheckpointPath); ok {
					add(filepath.Join(root, ep))
				}
				if abs, err := filepath.Abs(ep); err == nil {
					add(abs)
				}
				if configDir != "" {
					if abs, err := filepath.Abs(filepath.Join(configDir, ep)); err == nil {
						add(abs)
					}
				}
			}
		}
	}
	if abs, err := filepath.Abs(dir); err == nil {
		add(abs)
	}
	return out, nil
}

// runRoot is the directory a PBG run was started in, when the checkpoint
// at dir was written to a relative checkpoint_path that dir ends with.
func runRoot(dir, checkpointPath string) (string, bool) {
	if checkpointPath == "" || filepath.IsAbs(checkpointPath) {
		return "", false
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", false
	}
	rel := filepath.Clean(checkpointPath)
	if rel == "." || strings.HasPrefix(rel, "..") {
		return "", false
	}
	if !strings.HasSuffix(abs, string(filepath.Separator)+rel) {
		return "", false
	}
	return strings.TrimSuffix(abs, string(filepath.Separator)+rel), true
}

// namesFile is PBG's names file of a partition.
func namesFile(dir, typ string, part int) string {
	return filepath.Join(dir, fmt.Sprintf("entity_names_%s_%d.json", typ, part))
}

// findNames picks the first candidate that holds partition 0's names of
// one of types; the error lists every place looked in.
func findNames(dir string, types []string, opts InitOptions) (string, error) {
	cands, err := namesCandidates(dir, opts.ConfigDir)
	if err != nil {
		return "", err
	}
	for _, c := range cands {
		for _, t := range types {
			if _, err := os.Stat(namesFile(c, t, 0)); err == nil {
				return c, nil
			}
		}
	}
	return "", fmt.Errorf("pbg: init_path %s: the names of its entities are not found (looked for entity_names_%s_0.json in %s); "+
		"batchprep places each row by its entity's name: copy PBG's entity_names_*.json files into %s",
		dir, types[0], strings.Join(cands, ", "), dir)
}

// readNames reads the checkpoint's names of typ, partition after
// partition, until a partition has no names file.
func readNames(dir, typ string) ([][]string, error) {
	var parts [][]string
	for p := 0; ; p++ {
		path := namesFile(dir, typ, p)
		b, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			return parts, nil
		}
		if err != nil {
			return nil, fmt.Errorf("pbg: init_path: %w", err)
		}
		var names []string
		if err := json.Unmarshal(b, &names); err != nil {
			return nil, fmt.Errorf("pbg: init_path: %s: not a JSON list of strings: %v", path, jsonMessage(err))
		}
		parts = append(parts, names)
	}
}

// matchType maps every store row of typ to the checkpoint row of the same
// name (or unmatched); src[p][i] is store partition p's row i.
func matchType(typ string, parts int, theirs [][]string, store Store) ([][]int64, TypeMatch, error) {
	m := TypeMatch{Type: typ}
	index := make(map[string]int64)
	for q, names := range theirs {
		m.Checkpoint += len(names)
		for off, n := range names {
			index[n] = rowSource(q, off)
		}
	}
	src := make([][]int64, parts)
	for p := range parts {
		ours, err := store.EntityNames(typ, p)
		if err != nil {
			return nil, m, err
		}
		s := make([]int64, len(ours))
		for i, n := range ours {
			v, ok := index[n]
			if !ok {
				v = unmatched
			} else {
				m.Matched++
			}
			s[i] = v
		}
		m.Store += len(ours)
		src[p] = s
	}
	return src, m, nil
}

// firstUnmatched is the name of a store entity of typ the checkpoint does
// not hold, for messages.
func firstUnmatched(src [][]int64, typ string, store Store) string {
	for p, s := range src {
		for i, v := range s {
			if v == unmatched {
				if names, err := store.EntityNames(typ, p); err == nil && i < len(names) {
					return names[i]
				}
			}
		}
	}
	return ""
}

// checkMatch applies the rule: every store entity must have a row in the
// checkpoint unless AllowUnmatched; none matching is refused either way.
func checkMatch(rep *InitReport, src map[string][][]int64, store Store, opts InitOptions) error {
	matched, total, ckpt := rep.Matched()
	if total == 0 || matched == total {
		return nil
	}
	var per []string
	for _, t := range rep.Types {
		if t.Matched < t.Store {
			per = append(per, fmt.Sprintf("%s: %d of %d, e.g. %q", t.Type, t.Store-t.Matched, t.Store, firstUnmatched(src[t.Type], t.Type, store)))
		}
	}
	head := fmt.Sprintf("pbg: init_path %s: %d of the store's %d entities have no row in the checkpoint (%s; names of its %d entities read from %s)",
		rep.Dir, total-matched, total, strings.Join(per, "; "), ckpt, rep.NamesDir)
	if matched == 0 {
		return fmt.Errorf("%s: no entity matches by name; is init_path a checkpoint of this graph?", head)
	}
	if !opts.AllowUnmatched {
		return &UnmatchedError{msg: head + ": every entity must match by name"}
	}
	return nil
}
