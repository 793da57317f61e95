package cli

import (
	"fmt"
	"io"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/source"
)

// The output formats of read: the summary totals, and the JSON and text
// lines of a minibatch, appended to a byte slice by hand for speed.

// readTotals counts this rank's delivered data for the summary.
type readTotals struct {
	start                           time.Time
	minibatches, sequences, skipped int64
	samples                         int64 // minibatch-size samples (global span)
	streams                         []int64
}

func (t *readTotals) add(mb *source.Minibatch) {
	t.minibatches++
	t.sequences += int64(len(mb.Sequences))
	t.skipped += int64(len(mb.Skipped))
	t.samples += int64(mb.End - mb.Start)
	for i := range mb.Streams {
		t.streams[i] += int64(mb.Streams[i].Samples())
	}
}

func (t *readTotals) write(w io.Writer, streams []corpus.Stream) {
	el := time.Since(t.start).Seconds()
	rate := 0.0
	if el > 0 {
		rate = float64(t.samples) / el
	}
	fmt.Fprintf(w, "minibatches: %d\nsequences: %d\nsamples: %d\n", t.minibatches, t.sequences, t.samples)
	for i, s := range streams {
		fmt.Fprintf(w, "samples %s: %d\n", s.Name, t.streams[i])
	}
	fmt.Fprintf(w, "skipped sequences: %d\nseconds: %.3f\nsamples/s: %.0f\n", t.skipped, el, rate)
}

// appendReadJSON writes SPEC A6's JSON line, built by hand for speed. For a
// mixture, corpus (one --mix index per sequence) is written beside
// "sequences", and skippedCorpus beside "skipped"; both are nil otherwise.
func appendReadJSON(b []byte, mb *source.Minibatch, corpus, skippedCorpus []int) []byte {
	b = append(b, `{"step":`...)
	b = strconv.AppendUint(b, mb.Step, 10)
	b = append(b, `,"epoch":`...)
	b = strconv.AppendInt(b, int64(mb.Epoch), 10)
	b = append(b, `,"sweep":`...)
	b = strconv.AppendUint(b, mb.Sweep, 10)
	b = append(b, `,"start":`...)
	b = strconv.AppendUint(b, mb.Start, 10)
	b = append(b, `,"end":`...)
	b = strconv.AppendUint(b, mb.End, 10)
	b = append(b, `,"end_of_sweep":`...)
	b = strconv.AppendBool(b, mb.EndOfSweep)
	b = append(b, `,"end_of_epoch":`...)
	b = strconv.AppendBool(b, mb.EndOfEpoch)
	b = append(b, `,"sequences":[`...)
	for i, s := range mb.Sequences {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(s), 10)
	}
	if corpus != nil {
		b = appendInts(append(b, `],"corpus":[`...), corpus)
	}
	b = append(b, `],"ids":[`...)
	for i, id := range mb.IDs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, id)
	}
	b = append(b, `],"samples":{`...)
	for i := range mb.Streams {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, mb.Streams[i].Name)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(mb.Streams[i].Samples()), 10)
	}
	b = append(b, '}')
	if len(mb.Skipped) > 0 {
		b = append(b, `,"skipped":[`...)
		for i, s := range mb.Skipped {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(s.Sequence), 10)
		}
		b = append(b, ']')
		if skippedCorpus != nil {
			b = append(appendInts(append(b, `,"skipped_corpus":[`...), skippedCorpus), ']')
		}
	}
	return append(b, "}\n"...)
}

// appendInts appends v's numbers separated by commas.
func appendInts(b []byte, v []int) []byte {
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(x), 10)
	}
	return b
}

// appendJSONString appends s as a JSON string (invalid UTF-8 becomes U+FFFD,
// as encoding/json does).
func appendJSONString(b []byte, s string) []byte {
	const hexd = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hexd[c>>4], hexd[c&15])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}

// appendReadText writes one readable line per minibatch.
func appendReadText(b []byte, mb *source.Minibatch) []byte {
	b = fmt.Appendf(b, "step %d epoch %d sweep %d [%d, %d) %d sequences", mb.Step, mb.Epoch, mb.Sweep, mb.Start, mb.End, len(mb.Sequences))
	for i := range mb.Streams {
		b = fmt.Appendf(b, " %s=%d", mb.Streams[i].Name, mb.Streams[i].Samples())
	}
	if mb.EndOfSweep {
		b = append(b, " end-of-sweep"...)
	}
	if mb.EndOfEpoch {
		b = append(b, " end-of-epoch"...)
	}
	if len(mb.Skipped) > 0 {
		b = fmt.Appendf(b, " skipped=%d", len(mb.Skipped))
	}
	b = append(b, " ids"...)
	const shown = 8
	for i, id := range mb.IDs {
		if i == shown {
			b = fmt.Appendf(b, " ...(+%d)", len(mb.IDs)-shown)
			break
		}
		b = append(b, ' ')
		b = append(b, id...)
	}
	return append(b, '\n')
}
