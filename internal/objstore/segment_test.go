package objstore

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// filesBySuffix counts the files under dir by kind: block files, segment
// files and temporary files.
func filesBySuffix(dir string) (blocks, segments, temps []string) {
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		switch {
		case err != nil || d.IsDir():
		case strings.HasPrefix(d.Name(), ".") && d.Name() != ".lock":
			temps = append(temps, p)
		case strings.HasSuffix(p, ".blk"):
			blocks = append(blocks, p)
		case strings.HasSuffix(p, ".seg"):
			segments = append(segments, p)
		}
		return nil
	})
	return blocks, segments, temps
}

// TestStreamCachesSegments: invariant 10. A stream writes each segment it
// passes whole as one file, and each other block it passes whole as a file
// of its own; another Object reads them all without a request.
func TestStreamCachesSegments(t *testing.T) {
	// 11 blocks: segments 0-3, 4-7 and 8-10 (the last one short).
	_, data := serve(t, 10*testBlock+123)
	opt := testOptions(t)
	o := open(t, opt)
	r := o.NewReader(1234) // enters block 0, so segment 0, past its start
	if got, err := io.ReadAll(r); err != nil || !bytes.Equal(got, data[1234:]) {
		t.Fatalf("stream: %d bytes, %v", len(got), err)
	}
	r.Close()
	blocks, segments, temps := filesBySuffix(opt.CacheDir)
	if len(blocks) != 3 || len(segments) != 2 || len(temps) != 0 {
		t.Fatalf("after the stream: %d block files, %d segment files, %d temporary files; want 3, 2, 0",
			len(blocks), len(segments), len(temps))
	}
	o.Close()
	o2 := open(t, opt)
	readRange(t, o2, data, testBlock, int64(len(data))-testBlock)
	if g := o2.Stats().Gets; g != 0 {
		t.Fatalf("reading what the stream passed made %d GETs; want 0", g)
	}
}

// TestFetchCachesSegments: a read whose GET holds a whole segment caches
// it as one file; the blocks of segments it holds in part have files of
// their own. Another Object reads them without a request.
func TestFetchCachesSegments(t *testing.T) {
	_, data := serve(t, 10*testBlock+123) // segments 0-3, 4-7, 8-10
	opt := testOptions(t)
	o := open(t, opt)
	readRange(t, o, data, 2*testBlock+5, 7*testBlock) // blocks 2-9, one GET
	if g := o.Stats().Gets; g != 1 {
		t.Fatalf("%d GETs; want 1", g)
	}
	o.Close() // waits for the cache writes
	blocks, segments, temps := filesBySuffix(opt.CacheDir)
	if len(blocks) != 4 || len(segments) != 1 || len(temps) != 0 {
		t.Fatalf("after the read: %d block files, %d segment files, %d temporary files; want 4 (blocks 2, 3, 8, 9), 1, 0",
			len(blocks), len(segments), len(temps))
	}
	o2 := open(t, opt)
	readRange(t, o2, data, 2*testBlock, 8*testBlock)
	if g := o2.Stats().Gets; g != 0 {
		t.Fatalf("reading what the read fetched made %d GETs; want 0", g)
	}
}

// TestDamagedSegment: invariant 8 for segment files. A bit flipped in one
// block of a segment, or a segment cut short, is caught when read: the
// file is removed, counted as bad, and the block fetched again.
func TestDamagedSegment(t *testing.T) {
	_, data := serve(t, 8*testBlock)
	for _, damage := range []string{"bit flip", "truncated"} {
		t.Run(damage, func(t *testing.T) {
			opt := testOptions(t)
			o := open(t, opt)
			r := o.NewReader(0)
			if _, err := io.Copy(io.Discard, r); err != nil {
				t.Fatal(err)
			}
			r.Close()
			o.Close()
			_, segments, _ := filesBySuffix(opt.CacheDir)
			if len(segments) != 2 {
				t.Fatalf("%d segment files; want 2", len(segments))
			}
			o2 := open(t, opt)
			seg := o2.cache.segPath(o2.where(5).seg)
			file, err := os.ReadFile(seg)
			if err != nil {
				t.Fatal(err)
			}
			if damage == "bit flip" {
				file[o2.where(5).segOff+100] ^= 1 // block 5
			} else {
				file = file[:len(file)-1]
			}
			if err := os.WriteFile(seg, file, 0o644); err != nil {
				t.Fatal(err)
			}
			readRange(t, o2, data, 5*testBlock, testBlock)
			st := o2.Stats()
			if st.CacheBad != 1 || st.Gets != 1 {
				t.Fatalf("a damaged segment: %d bad files, %d GETs; want 1 and 1", st.CacheBad, st.Gets)
			}
			if _, err := os.Stat(seg); !os.IsNotExist(err) {
				t.Fatalf("the damaged segment is still there: %v", err)
			}
			// The other segment is untouched.
			readRange(t, o2, data, 0, 4*testBlock)
			if g := o2.Stats().Gets; g != 1 {
				t.Fatalf("reading the good segment made %d GETs more", g-1)
			}
		})
	}
}

// TestStreamClosedMidSegment: a stream closed inside a segment leaves no
// file of it, not even a temporary one; its blocks are fetched when read.
func TestStreamClosedMidSegment(t *testing.T) {
	_, data := serve(t, 8*testBlock)
	opt := testOptions(t)
	o := open(t, opt)
	r := o.NewReader(0)
	if _, err := io.ReadFull(r, make([]byte, 2*testBlock+100)); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if blocks, segments, temps := filesBySuffix(opt.CacheDir); len(blocks)+len(segments)+len(temps) != 0 {
		t.Fatalf("a stream closed mid-segment left %d block, %d segment and %d temporary files",
			len(blocks), len(segments), len(temps))
	}
	readRange(t, o, data, 0, 3*testBlock)
	if g := o.Stats().Gets; g != 2 {
		t.Fatalf("%d GETs; want 2 (the stream's and the read's)", g)
	}
}

// TestBlockFileBeforeSegment: a block with a file of its own is read from
// it, not from its segment's file; either one alone serves it.
func TestBlockFileBeforeSegment(t *testing.T) {
	c := newCache(t.TempDir(), 1<<30)
	o := &Object{url: "s3://b/k", etag: `"e"`, size: 8 * testBlock, opt: Options{blockSize: testBlock}}
	blocks := make([][]byte, 4)
	for i := range blocks {
		blocks[i] = bytes.Repeat([]byte{byte(i + 1)}, testBlock)
	}
	w := o.where(2)
	f, err := c.create(c.segPath(w.seg), w.segSize)
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range blocks {
		f.add(o.blockKey(int64(i)), b)
	}
	if err := f.commit(); err != nil {
		t.Fatal(err)
	}
	if got, bad := c.get(w); bad || !bytes.Equal(got, blocks[2]) {
		t.Fatalf("block 2 from its segment: bad %v, right bytes %v", bad, bytes.Equal(got, blocks[2]))
	}
	own := bytes.Repeat([]byte{9}, testBlock)
	if err := c.put(w.key, own); err != nil {
		t.Fatal(err)
	}
	dst := make([]byte, 10)
	if ok, bad := c.readRange(w, 100, 110, dst); !ok || bad || !bytes.Equal(dst, own[100:110]) {
		t.Fatalf("block 2 with a file of its own: ok %v, bad %v, %v", ok, bad, dst)
	}
	// A segment is not a block file: a lookup without it misses.
	if c.has(where{key: o.blockKey(1)}) || !c.has(o.where(1)) {
		t.Fatal("has does not tell a segment's block from a block file")
	}
	// A file over the cache's bound is not started.
	small := newCache(t.TempDir(), w.segSize-1)
	if f, err := small.create(small.segPath(w.seg), w.segSize); f != nil || err != nil {
		t.Fatalf("a segment larger than the bound: %v, %v", f, err)
	}
}

// FuzzSegment: invariant 8 for segment files. Whatever bytes a segment
// file holds, a read of one of its blocks, whole or in part, either fails
// or returns the bytes written there: never other bytes, never a panic.
func FuzzSegment(f *testing.F) {
	const block = 100
	o := &Object{url: "s3://b/k", etag: `"e"`, size: 3*block + 40, opt: Options{blockSize: block}}
	want := make([][]byte, 4)
	var good []byte
	for i := range want {
		want[i] = bytes.Repeat([]byte{byte('a' + i)}, int(o.blockLen(int64(i))))
		good = append(good, want[i]...)
		good = appendTrailer(good, o.blockKey(int64(i)), want[i])
	}
	f.Add(good, uint8(0), uint8(0))
	f.Add(good[:len(good)-1], uint8(10), uint8(90))
	f.Add([]byte("short"), uint8(1), uint8(2))
	f.Fuzz(func(t *testing.T, file []byte, lo, hi uint8) {
		r := bytes.NewReader(file)
		for i := range want {
			w := o.where(int64(i))
			l, h := min(int64(lo), w.n), min(int64(hi), w.n)
			if l > h {
				l, h = h, l
			}
			if l == h {
				l, h = 0, w.n
			}
			dst := make([]byte, h-l)
			if err := checkedRange(r, int64(len(file)), w.segSize, w.segOff, w, l, h, dst); err == nil && !bytes.Equal(dst, want[i][l:h]) {
				t.Fatalf("block %d [%d, %d): read %q from a damaged segment", i, l, h, dst)
			}
		}
	})
}
