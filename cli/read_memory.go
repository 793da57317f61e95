package cli

import (
	"errors"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"

	"github.com/batchprep/batchprep/corpus/file"
	"github.com/batchprep/batchprep/corpus/source"
)

// parseMemoryLimit parses --memory-limit: "auto", "off" (or "0"), or a byte
// count with an optional KiB, MiB or GiB suffix.
func parseMemoryLimit(v string) (limit int64, auto bool, err error) {
	switch v {
	case "auto":
		return 0, true, nil
	case "off", "0":
		return 0, false, nil
	}
	n, err := parseSize(v)
	if err != nil || n < 1 {
		return 0, false, errors.New("want auto, off, or a positive size such as 512MiB")
	}
	return n, false, nil
}

// applyMemoryLimit sets the Go runtime's soft memory limit for the read and
// returns a function restoring the previous one. With "auto" the limit is
// the bound of docs/source.md, the bytes of the chunks the source keeps
// (ResidentChunks times the chunk size) plus 64 MiB, less an 8 MiB reserve
// for the process, raised when the index alone nearly fills that
// (source.MemoryLimit); without a limit the
// collector lets the heap grow to about twice the live data (GOGC=100) and
// the peak exceeds the bound. A GOMEMLIMIT in the environment wins over
// "auto".
func applyMemoryLimit(f *readFlags, r file.Reader, src *source.Source, chunkBytes int64) (func(), error) {
	limit, auto, err := parseMemoryLimit(f.memoryLimit)
	if err != nil {
		return nil, usagef("--memory-limit %q: %v", f.memoryLimit, err)
	}
	if auto {
		if os.Getenv("GOMEMLIMIT") != "" {
			return func() {}, nil
		}
		limit = autoMemoryLimit(r, src, chunkBytes)
	}
	if limit == 0 {
		return func() {}, nil
	}
	old := debug.SetMemoryLimit(limit)
	if readLimitHook != nil {
		readLimitHook()
	}
	if !auto {
		return func() { debug.SetMemoryLimit(old) }, nil
	}
	stop := followLive(limit)
	return func() { stop(); debug.SetMemoryLimit(old) }, nil
}

// followLive raises the automatic limit whenever the live heap, as the
// last collection measured it, leaves too little room under it
// (source.RaiseLimit): the window's parsed chunks can outgrow the text
// that sized the limit (short sequences, each an id string and offsets),
// and a limit just above the live data makes the collector run without
// pause and free nothing. It checks every 50 ms until stop is called; it
// never lowers the limit.
func followLive(limit int64) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			metrics.Read(sample)
			if sample[0].Value.Kind() != metrics.KindUint64 {
				return
			}
			if want := source.RaiseLimit(limit, int64(sample[0].Value.Uint64())); want > limit {
				limit = want
				debug.SetMemoryLimit(limit)
				if readRaiseHook != nil {
					readRaiseHook(limit)
				}
			}
		}
	}()
	return func() { close(done); <-finished }
}

// readRaiseHook, when set by a test, sees each raise of the automatic limit.
var readRaiseHook func(limit int64)

// readLimitHook, when set by a test, runs once the read's limit is in force.
var readLimitHook func()

// autoMemoryLimit is source.MemoryLimit for this read: window bytes + 64 MiB,
// less the 8 MiB process reserve (raised when the index leaves too little
// room). The window's chunk size
// is the configured chunk size, or the file's average chunk when the chunks
// are counted in sequences (or run larger than configured).
func autoMemoryLimit(r file.Reader, src *source.Source, chunkBytes int64) int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	per := chunkBytes
	if info, err := os.Stat(r.Path()); err == nil {
		per = max(per, info.Size()/int64(max(r.Layout().NumChunks(), 1)))
	}
	return source.MemoryLimit(int64(ms.HeapInuse), int64(src.ResidentChunks())*per)
}
