package edgestore

import "fmt"

// SourceColumns records how an edge set's text file was read at import:
// the 0-based columns of the lhs entity, the relation (-1: none) and the
// rhs entity, and the field separator (tab, comma or space). A tool that
// reads more edges of the same kind (eval --edges) takes them as its
// defaults. Stores imported before the record existed, and edge sets
// imported from Parquet or from PBG's files, have none.
type SourceColumns struct {
	Lhs       int    `json:"lhs"`
	Rel       int    `json:"rel"`
	Rhs       int    `json:"rhs"`
	Delimiter string `json:"delimiter"`
}

func (c *SourceColumns) check() error {
	switch {
	case c.Lhs < 0 || c.Rhs < 0 || c.Rel < -1 || c.Lhs > 1<<20 || c.Rel > 1<<20 || c.Rhs > 1<<20:
		return fmt.Errorf("source_columns: columns lhs %d, rel %d, rhs %d out of range", c.Lhs, c.Rel, c.Rhs)
	case c.Delimiter != "tab" && c.Delimiter != "comma" && c.Delimiter != "space":
		return fmt.Errorf("source_columns: delimiter %q is not one of tab, comma, space", c.Delimiter)
	}
	return nil
}

// SetSourceColumns records in edge set s's manifest how its file was read
// (after EdgeSet, before Commit).
func (w *Writer) SetSourceColumns(s int, c SourceColumns) error {
	if s < 0 || s >= len(w.sets) || !w.sets[s].started {
		return fmt.Errorf("edgestore: edge set %d not started", s)
	}
	if err := c.check(); err != nil {
		return fmt.Errorf("edgestore: %w", err)
	}
	w.sets[s].columns = &c
	return nil
}

// SourceColumns returns how edge set i's file was read at import, or nil
// when its manifest has no record.
func (s *Store) SourceColumns(i int) *SourceColumns {
	if c := s.sets[i].man.SourceColumns; c != nil {
		cp := *c
		return &cp
	}
	return nil
}
