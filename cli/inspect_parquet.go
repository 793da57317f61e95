package cli

import (
	"github.com/batchprep/batchprep/corpus/ctf"
	"github.com/batchprep/batchprep/corpus/parquet"
	"github.com/batchprep/batchprep/corpusfile"
)

// inspectParquet reports on a Parquet corpus: its streams (given, recorded
// by convert, or inferred from the schema), row groups, sequences, samples
// and chunks. Open checks every row, so the first bad row is the fatal
// error, with its row group, row and column.
func inspectParquet(path string, cfg ctf.Config) (rep *inspectReport, fatal, err error) {
	inferred := false
	if len(cfg.Streams) == 0 {
		var exact bool
		if cfg.Streams, exact, err = parquet.InferStreams(path); err != nil {
			return nil, nil, err
		}
		inferred = !exact
	}
	rep = newInspectReport(path)
	rep.Format = string(corpusfile.Parquet)
	rep.setStreams(cfg.Streams, inferred)
	if pc := corpusfile.ParquetConfig(cfg); pc.Validate() != nil {
		err := pc.Validate()
		return nil, nil, usagef("%v", err)
	}
	r, err := corpusfile.Open(path, cfg)
	if err != nil {
		rep.Fatal = err.Error()
		rep.Errors = 1
		return rep, err, nil
	}
	defer r.Close()
	l := r.Layout()
	if pr, ok := corpusfile.ParquetOf(r); ok {
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
