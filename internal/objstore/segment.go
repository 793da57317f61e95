package objstore

import (
	"crypto/sha256"
	"fmt"
	"slices"
)

// A stream that passes every block of an aligned run of segBlocks blocks
// (a segment), or a fetch that holds them all, writes them to the cache as
// one segment file instead of a file each: the blocks and their trailers
// one after the other, as their block files would hold them. A block is
// looked for in its own file first, then in its slot of its segment's
// file. Fewer files cost the file system less: on ext4 without a journal
// each new file scans past the inodes freed in the last minutes, which an
// evicting cache keeps plentiful. The other blocks (a chunk's read that
// spans two blocks) keep files of their own.
const segBlocks = 4

// SegmentBytes is the size of the runs of an object that a stream over
// them, or a fetch of them, caches as one file: a pass that cuts an object
// into ranges aligned to it (corpus/ctf's index pass) leaves no block in a
// file of its own.
const SegmentBytes = segBlocks * blockSize

// where locates a block in the cache: its key and length, and, when its
// segment holds more than one block, the segment file's key and size and
// the block's offset in it (segSize 0: no segment).
type where struct {
	key             [32]byte
	n               int64
	seg             [32]byte
	segOff, segSize int64
}

// numBlocks is how many blocks the object has.
func (o *Object) numBlocks() int64 {
	return (o.size + o.opt.blockSize - 1) / o.opt.blockSize
}

// segment returns the first block of block idx's segment and how many
// blocks the segment has (fewer at the object's end).
func (o *Object) segment(idx int64) (first, n int64) {
	first = idx - idx%segBlocks
	return first, min(segBlocks, o.numBlocks()-first)
}

// slotLen is the length of block idx and its trailer in a segment file.
func (o *Object) slotLen(idx int64) int64 { return o.blockLen(idx) + trailerLen(o.blockLen(idx)) }

// where locates block idx in the cache.
func (o *Object) where(idx int64) where {
	w := where{key: o.blockKey(idx), n: o.blockLen(idx)}
	first, n := o.segment(idx)
	if n < 2 {
		return w
	}
	w.seg = sha256.Sum256(fmt.Appendf(nil, "%s\x00%s\x00%d\x00segment\x00%d\x00%d", o.url, o.etag, o.size, first*o.opt.blockSize, n*o.opt.blockSize))
	for i := first; i < first+n; i++ {
		if i < idx {
			w.segOff += o.slotLen(i)
		}
		w.segSize += o.slotLen(i)
	}
	return w
}

// beginSegment starts the cache file of the segment that starts at block
// first, for its blocks to be added in order. It returns nil when the
// segment is cached already or cannot be (its file could not be made, or
// it is larger than the cache's bound): its blocks are then stored alone.
func (o *Object) beginSegment(first int64) *cacheFile {
	w := o.where(first)
	if o.cache.hasSegment(w.seg) {
		return nil
	}
	f, _ := o.cache.create(o.cache.segPath(w.seg), w.segSize)
	return f
}

// putSegment writes blocks, all of the segment that starts at block first,
// to the cache: as one file, or each alone when beginSegment returns nil
// (none that is cached already).
func (o *Object) putSegment(first int64, blocks [][]byte) {
	if f := o.beginSegment(first); f != nil {
		for i, b := range blocks {
			f.add(o.blockKey(first+int64(i)), b)
		}
		f.commit()
		return
	}
	for i, b := range blocks {
		if w := o.where(first + int64(i)); !o.cache.has(w) {
			o.cache.put(w.key, b)
		}
	}
}

// storeFetched writes the blocks a fetch owned (fetched: data set) to the
// cache in the background, each segment they hold whole as one file and
// the others alone, a write slot each, and lets go of each once written.
func (o *Object) storeFetched(owned map[int64]*pending) {
	runs := map[int64][]int64{} // by first block: the blocks written together
	for i := range owned {
		first, n := o.segment(i)
		whole := n > 1
		for j := first; j < first+n && whole; j++ {
			whole = owned[j] != nil
		}
		if whole {
			runs[first] = append(runs[first], i)
		} else {
			runs[i] = []int64{i}
		}
	}
	for first, run := range runs {
		slices.Sort(run)
		o.writes <- struct{}{}
		o.wg.Go(func() {
			blocks := make([][]byte, len(run))
			for k, j := range run {
				blocks[k] = owned[j].data
			}
			if len(run) == 1 {
				o.cache.put(o.blockKey(first), blocks[0])
			} else {
				o.putSegment(first, blocks)
			}
			<-o.writes
			o.mu.Lock()
			for _, j := range run {
				delete(o.inflight, j)
			}
			o.mu.Unlock()
		})
	}
}
