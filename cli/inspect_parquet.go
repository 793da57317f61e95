package cli

import (
	"github.com/batchprep/batchprep/corpus/ctf"
	"github.com/batchprep/batchprep/corpus/file"
	"github.com/batchprep/batchprep/corpus/parquet"
)

// inspectParquet reports on a Parquet corpus: its streams (given, recorded
// by convert, or inferred from the schema), row groups, sequences, samples
// and chunks. Open checks every row, so the first bad row is the fatal
// error, with its row group, row and column. Inferred streams come with
// the columns inference left out and why.
func inspectParquet(in corpusFiles, path string, cfg ctf.Config) (rep *inspectReport, fatal, err error) {
	inferred := false
	var leftOut []parquet.LeftOut
	if len(cfg.Streams) == 0 {
		inf, err := in.inferParquet(path)
		if err != nil {
			return nil, nil, err
		}
		cfg.Streams, inferred, leftOut = inf.Streams, !inf.Exact, inf.LeftOut
	}
	rep = newInspectReport(path)
	rep.Format = string(file.Parquet)
	rep.setStreams(cfg.Streams, inferred)
	for _, l := range leftOut {
		rep.LeftOut = append(rep.LeftOut, inspectLeftOut{l.Column, l.Reason})
	}
	if pc := file.ParquetConfig(cfg); pc.Validate() != nil {
		err := pc.Validate()
		return nil, nil, usagef("%v", err)
	}
	r, err := in.open(path, cfg)
	if err != nil {
		rep.Fatal = err.Error()
		rep.Errors = 1
		return rep, err, nil
	}
	defer r.Close()
	l := r.Layout()
	if pr, ok := file.ParquetOf(r); ok {
		rep.RowGroups = pr.RowGroups()
	}
	rep.setLayout(l)
	s := r.Summary()
	rep.Skipped, rep.WarningKinds = s.Skipped, s.Warnings
	for i, st := range cfg.Streams {
		rep.Samples[st.Name] = s.Samples[i]
	}
	return rep, nil, nil
}
