package pbg

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/edgestore"
)

// Invariant 7: a config naming PBG's imported data is read through a
// store converted beside entity_path, reused while PBG's files are
// unchanged and converted again when they change; PBG's directory is never
// written.
func TestMirror(t *testing.T) {
	root := t.TempDir()
	data := filepath.Join(root, "data")
	copyDir(t, filepath.Join("testdata", "pbgdata"), data)
	cfg := importCfg(t, root, 2)
	cfg.EntityPath, cfg.EdgePaths = data, []string{filepath.Join(data, "train")}
	if !IsData(cfg) {
		t.Fatal("IsData: false for PBG's data")
	}
	files := func() string {
		var b strings.Builder
		filepath.Walk(data, func(p string, fi os.FileInfo, err error) error {
			b.WriteString(p + " " + fi.ModTime().String() + "\n")
			return err
		})
		return b.String()
	}
	before := files()
	ensure := func(wantBuilt bool, reason string) *config.Config {
		t.Helper()
		mc, rep, err := EnsureMirror(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Built != wantBuilt || !strings.Contains(rep.Reason, reason) || rep.Dir != data+MirrorSuffix {
			t.Fatalf("report %+v, want built %v because %q", rep, wantBuilt, reason)
		}
		st, err := edgestore.Open(mc)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if n := st.TotalEdges(0); n != 14 {
			t.Fatalf("%d edges in the converted store, want 14", n)
		}
		if IsData(mc) {
			t.Fatal("IsData: true for the converted store")
		}
		return mc
	}
	mc := ensure(true, "no store converted from them yet")
	if mc.EdgePaths[0] != filepath.Join(data+MirrorSuffix, "edges", "train") || mc.EntityPath != filepath.Join(data+MirrorSuffix, "entities") {
		t.Fatalf("store paths %s %v", mc.EntityPath, mc.EdgePaths)
	}
	ensure(false, "")
	if files() != before {
		t.Fatal("PBG's directory changed")
	}
	later := time.Now().Add(time.Hour)
	os.Chtimes(filepath.Join(data, "train", "edges_0_1.h5"), later, later)
	ensure(true, "edges_0_1.h5 was modified")
	ensure(false, "")
	// An unreadable record is converted again.
	os.WriteFile(filepath.Join(data+MirrorSuffix, MirrorRecordName), []byte("{}"), 0o644)
	ensure(true, "is unreadable")
}

// Invariant 7: conversions started together (the ranks of a distributed
// run) take turns: one converts, the others reuse its store.
func TestMirrorConcurrent(t *testing.T) {
	root := t.TempDir()
	data := filepath.Join(root, "data")
	copyDir(t, filepath.Join("testdata", "pbgdata"), data)
	cfg := importCfg(t, root, 2)
	cfg.EntityPath, cfg.EdgePaths = data, []string{filepath.Join(data, "train")}
	const n = 4
	built := make(chan bool, n)
	errs := make(chan error, n)
	for range n {
		go func() {
			_, rep, err := EnsureMirror(context.Background(), cfg)
			errs <- err
			built <- err == nil && rep.Built
		}()
	}
	count := 0
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
		if <-built {
			count++
		}
	}
	if count != 1 {
		t.Fatalf("%d of %d concurrent calls converted, want 1", count, n)
	}
}
