package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/batchprep/batchprep/corpus/ctf"
	"github.com/batchprep/batchprep/corpus/mixture"
)

// inspectMixReport is inspect --mix's report: each corpus's own report, in
// --mix order, and the mixture's shape (nil when a corpus could not be
// read to the end).
type inspectMixReport struct {
	Corpora []*inspectReport `json:"corpora"`
	Mixture *inspectMixShape `json:"mixture,omitempty"`
}

// inspectMixShape is mixture.Shape as inspect prints it.
type inspectMixShape struct {
	Anchor  int                `json:"anchor"`
	Corpora []inspectMixCorpus `json:"corpora"`
	Error   string             `json:"error,omitempty"`
}

type inspectMixCorpus struct {
	File   string `json:"file"`
	Weight string `json:"weight"`
	// Share is the corpus's reduced share of the mixture's samples, "a/A".
	Share string `json:"share"`
	// SweepSamples is one sweep of the corpus; SweepSpan the samples of the
	// mixture's timeline that sweep spans (SweepSamples / share).
	SweepSamples uint64 `json:"sweep_samples"`
	SweepSpan    uint64 `json:"sweep_span"`
}

// runInspectMix is inspect --mix: every corpus is inspected as alone, then
// the mixture's anchor and sweeps are derived from their samples per sweep
// (mixture.ShapeOf). A corpus that fails still leaves the others reported;
// the first failure is the exit status.
func runInspectMix(env *Env, in corpusFiles, mix []string, cfg ctf.Config, format string) error {
	specs := make([]mixture.Spec, len(mix))
	ws := make([]mixture.Weight, len(mix))
	written := make([]string, len(mix)) // each weight as the user wrote it
	for i, a := range mix {
		sp, err := mixture.ParseSpec(a)
		if err != nil {
			return usagef("%v", err)
		}
		specs[i], ws[i] = sp, sp.Weight
		written[i] = a[strings.LastIndexByte(a, '=')+1:]
	}
	if _, err := mixture.Integers(ws); err != nil {
		return usagef("--mix: %v (corpus k is the k-th --mix, from 0)", err)
	}
	var out inspectMixReport
	var firstFatal error
	sweeps := make([]uint64, len(specs))
	for i, sp := range specs {
		rep, fatal, err := inspectOne(in, sp.Path, cfg)
		if err != nil {
			return fmt.Errorf("--mix %d (%s): %w", i, sp.Path, err)
		}
		if fatal != nil && firstFatal == nil {
			firstFatal = fmt.Errorf("--mix %d (%s): %w", i, sp.Path, fatal)
		}
		out.Corpora = append(out.Corpora, rep)
		sweeps[i] = rep.TotalSamples
	}
	if firstFatal == nil {
		out.Mixture = mixShape(specs, written, sweeps)
	}
	if format == "json" {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return err
		}
	} else {
		out.text(env.Stdout)
	}
	return firstFatal
}

// mixShape describes the mixture of specs (their weights as written)
// whose corpora have sweeps samples per sweep.
func mixShape(specs []mixture.Spec, written []string, sweeps []uint64) *inspectMixShape {
	ws := make([]mixture.Weight, len(specs))
	for i, sp := range specs {
		ws[i] = sp.Weight
	}
	sh, err := mixture.ShapeOf(sweeps, ws)
	if err != nil {
		return &inspectMixShape{Error: err.Error()}
	}
	m := &inspectMixShape{Anchor: sh.Anchor}
	for k, sp := range specs {
		m.Corpora = append(m.Corpora, inspectMixCorpus{File: sp.Path, Weight: written[k],
			Share:        fmt.Sprintf("%d/%d", sh.Weights[k], sh.Total),
			SweepSamples: sh.Sweep[k], SweepSpan: sh.Span(k)})
	}
	return m
}

func (r *inspectMixReport) text(w io.Writer) {
	for k, rep := range r.Corpora {
		fmt.Fprintf(w, "== corpus %d\n", k)
		rep.text(w)
		fmt.Fprintln(w)
	}
	m := r.Mixture
	switch {
	case m == nil:
		fmt.Fprintf(w, "mixture    not derived: a corpus could not be read\n")
		return
	case m.Error != "":
		fmt.Fprintf(w, "mixture    %s\n", m.Error)
		return
	}
	fmt.Fprintf(w, "mixture    %d corpora; anchor corpus %d (%s): its sweeps are the mixture's\n", len(m.Corpora), m.Anchor, m.Corpora[m.Anchor].File)
	for k, c := range m.Corpora {
		fmt.Fprintf(w, "  corpus %-3d weight %s, share %s; a sweep: %d samples, %d of the mixture's timeline (%s)\n",
			k, c.Weight, c.Share, c.SweepSamples, c.SweepSpan, c.File)
	}
}
