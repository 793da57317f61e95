package importer

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
)

// Format is an input file's format.
type Format int

const (
	FormatAuto    Format = iota // detect per file (DetectFormat)
	FormatText                  // delimiter-separated edge lines
	FormatParquet               // a Parquet file, one edge per row
)

// ParseFormat reads "auto", "text" (also "tsv", "csv") or "parquet".
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(s) {
	case "auto", "":
		return FormatAuto, nil
	case "text", "tsv", "csv":
		return FormatText, nil
	case "parquet":
		return FormatParquet, nil
	}
	return 0, fmt.Errorf("importer: format %q is not one of auto, text, parquet", s)
}

func (f Format) String() string {
	switch f {
	case FormatAuto:
		return "auto"
	case FormatText:
		return "text"
	case FormatParquet:
		return "parquet"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// parquetMagic opens and closes every Parquet file.
var parquetMagic = []byte("PAR1")

// DetectFormat tells a Parquet file from a text edge list: a file that
// starts with the Parquet magic "PAR1", or whose name ends in ".parquet"
// (any case), is Parquet; any other file is text.
func DetectFormat(path string) (Format, error) {
	if strings.HasSuffix(strings.ToLower(path), ".parquet") {
		return FormatParquet, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("importer: %w", err)
	}
	defer f.Close()
	return DetectFormatOf(f, path)
}

// DetectFormatOf is DetectFormat of the edge file in, which path names.
func DetectFormatOf(in Input, path string) (Format, error) {
	if strings.HasSuffix(strings.ToLower(path), ".parquet") {
		return FormatParquet, nil
	}
	var head [4]byte
	n, err := in.ReadAt(head[:], 0)
	if err != nil && err != io.EOF {
		return 0, fmt.Errorf("importer: %s: %w", path, err)
	}
	if bytes.Equal(head[:n], parquetMagic) {
		return FormatParquet, nil
	}
	return FormatText, nil
}

// formatOf is opts.Format, or the detected format of in at path.
func formatOf(opts *Options, in Input, path string) (Format, error) {
	if opts.Format != FormatAuto {
		return opts.Format, nil
	}
	return DetectFormatOf(in, path)
}
