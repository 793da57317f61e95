package file

import (
	"fmt"
	"io"
	"regexp"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/ctf"
	"github.com/batchprep/batchprep/corpus/parquet"
	"github.com/batchprep/batchprep/internal/atomicfile"
)

// ConvertStats is what a conversion wrote.
type ConvertStats struct {
	Sequences int64
	Forms     []parquet.Form // ToParquet: each stream's form
	// RenumberedIDs counts the ids ToCTF replaced by row numbers.
	RenumberedIDs int64
}

// ToParquet writes every sequence of src, in file order, to a Parquet
// corpus at out (invariants 2 and 3). It reads src twice: once to choose
// each stream's form (parquet.Widen), once to write.
func ToParquet(src corpus.Source, out string, opt parquet.WriterOptions) (ConvertStats, error) {
	streams := src.Streams()
	forms := parquet.Forms(streams)
	if err := eachChunk(src, func(ch *corpus.Chunk) error {
		parquet.Widen(forms, streams, ch)
		return nil
	}); err != nil {
		return ConvertStats{}, err
	}
	opt.Forms = forms
	st := ConvertStats{Forms: forms}
	err := atomicfile.WriteFrom(out, 0o644, func(w io.Writer) error {
		pw, err := parquet.NewWriter(w, streams, opt)
		if err != nil {
			return err
		}
		if err := eachChunk(src, pw.WriteChunk); err != nil {
			return err
		}
		st.Sequences = pw.Rows()
		return pw.Close()
	})
	return st, err
}

var digits = regexp.MustCompile(`^[0-9]+$`)

// ToCTF writes every sequence of src, in file order, as CTF at out
// (invariants 2 and 3). Ids that CTF cannot hold (not digits, or equal to
// the previous one, which would merge the two sequences) become the row
// number; if that would repeat the previous id too, every id is replaced.
func ToCTF(src corpus.Source, out string) (ConvertStats, error) {
	streams := src.Streams()
	var st ConvertStats
	err := atomicfile.WriteFrom(out, 0o644, func(w io.Writer) error {
		cw := ctf.NewWriter(w, streams)
		prev := ""
		if err := eachChunk(src, func(ch *corpus.Chunk) error {
			for i := range ch.Len() {
				id := ch.IDs[i]
				if !digits.MatchString(id) || id == prev {
					id = fmt.Sprint(ch.First + i)
					st.RenumberedIDs++
					if id == prev {
						return fmt.Errorf("sequence %d: its id %q cannot be written in CTF", ch.First+i, ch.IDs[i])
					}
				}
				if err := cw.Write(id, ctf.ChunkSamples(ch, streams, i)); err != nil {
					return err
				}
				prev = id
				st.Sequences++
			}
			return nil
		}); err != nil {
			return err
		}
		return cw.Flush()
	})
	return st, err
}

// eachChunk calls fn on every chunk of src in order; a bad sequence is an
// error (a conversion drops nothing).
func eachChunk(src corpus.Source, fn func(*corpus.Chunk) error) error {
	for c := range src.Layout().NumChunks() {
		ch, err := src.LoadChunk(c)
		if err != nil {
			return err
		}
		for i := range ch.Len() {
			if err := ch.BadAt(i); err != nil {
				return err
			}
		}
		if err := fn(ch); err != nil {
			return err
		}
		if r, ok := src.(corpus.Recycler); ok {
			r.Recycle(ch)
		}
	}
	return nil
}
