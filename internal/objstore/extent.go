package objstore

import (
	"crypto/sha256"
	"fmt"
	"io"
)

// Exact reads (Options.Exact, invariant 12). A reader that reads ranges far
// apart, such as a data-parallel rank that loads only its own chunks, would
// fetch two whole blocks for a chunk that starts inside one block and ends
// inside the next: twice its bytes, and the other ranks' bytes besides. With
// Exact, the part of a block a read needs is fetched alone when the block is
// neither cached nor on its way, and cached as a file of its own (an
// extent) under the hash of its own range; a later read of that range or of
// a range inside it, in this Object, or of exactly that range in another
// process, is served from it. Whole blocks inside a read are fetched and
// cached as blocks, in the same GET.

// SetExact turns exact reads on or off (Options.Exact) for the reads that
// follow: a reader that finds its reads are not far apart after all (a
// Parquet corpus whose open counts every row group) turns them off. Bytes
// cached either way serve both.
func (o *Object) SetExact(on bool) { o.exact.Store(on) }

// Exact reports whether reads are exact now (Options.Exact, or as SetExact
// last set it).
func (o *Object) Exact() bool { return o.exact.Load() }

// extent is a part of one block fetched alone: bytes [lo, hi) of the
// object. pd is set while it is fetched and until its cache file is
// written; nil afterwards (the file holds it).
type extent struct {
	lo, hi int64
	pd     *pending
}

// part is the piece of a read that falls in block idx: bytes [lo, hi).
type part struct {
	idx, lo, hi int64
	pd          *pending // where its bytes come from once claimed
	e           *extent  // the extent holding it, for a partial part
	off         int64    // where pd.data starts in the object
}

// whole tells whether p covers its block entirely.
func (o *Object) whole(p part) bool {
	return p.lo == p.idx*o.opt.blockSize && p.hi == p.idx*o.opt.blockSize+o.blockLen(p.idx)
}

// rangeKey names bytes [off, off+n) of this version of the object in the
// cache: a block's key when the range is a block.
func (o *Object) rangeKey(off, n int64) [32]byte {
	return sha256.Sum256(fmt.Appendf(nil, "%s\x00%s\x00%d\x00%d\x00%d", o.url, o.etag, o.size, off, n))
}

// readExact is ReadAt for Options.Exact.
func (o *Object) readExact(p []byte, off int64) (int, error) {
	end := min(off+int64(len(p)), o.size)
	bs := o.opt.blockSize
	small := end-off < pieceLen
	for {
		missing := o.parts(off, end, func(pt part) bool {
			dst := p[pt.lo-off : pt.hi-off]
			return o.readCached(pt.idx, pt.lo-pt.idx*bs, pt.hi-pt.idx*bs, dst, small) ||
				(!o.whole(pt) && o.extentCached(pt.idx, pt.lo, pt.hi, dst))
		})
		if len(missing) == 0 {
			break
		}
		if owned := o.claimParts(missing); len(owned) > 0 {
			o.getParts(missing, owned)
		}
		again := false
		for _, pt := range missing {
			if pt.pd == nil { // in a cache file since the look: read it next round
				again = true
				continue
			}
			select {
			case <-pt.pd.done:
			case <-o.ctx.Done():
				return 0, &Error{URL: o.url, Op: "read", Msg: "the object was closed"}
			}
			if pt.pd.err != nil {
				return 0, pt.pd.err
			}
			copy(p[pt.lo-off:pt.hi-off], pt.pd.data[pt.lo-pt.off:pt.hi-pt.off])
		}
		if !again {
			break
		}
	}
	if n := int(end - off); n < len(p) {
		return n, io.EOF
	}
	return len(p), nil
}

// prefetchExact is Prefetch for Options.Exact: the parts of [off, end)
// neither cached nor on their way are claimed now and fetched in the
// background, in GETs of at most prefetchSpan.
func (o *Object) prefetchExact(off, end int64) {
	missing := o.parts(off, end, func(pt part) bool {
		if o.whole(pt) {
			return o.cache.has(o.where(pt.idx))
		}
		return o.cache.has(o.where(pt.idx)) || o.extentKnown(pt.idx, pt.lo, pt.hi)
	})
	owned := o.claimParts(missing)
	for len(owned) > 0 {
		n := 1
		for n < len(owned) && missing[owned[n]].hi-missing[owned[0]].lo <= max(prefetchSpan, o.opt.blockSize) {
			n++
		}
		batch := owned[:n]
		owned = owned[n:]
		o.wg.Go(func() { o.getParts(missing, batch) })
	}
}

// parts cuts [off, end) at block boundaries and returns the parts done
// reports false for (done serves a part from what is at hand).
func (o *Object) parts(off, end int64, done func(part) bool) []part {
	bs := o.opt.blockSize
	var missing []part
	for idx := off / bs; idx <= (end-1)/bs; idx++ {
		pt := part{idx: idx, lo: max(off, idx*bs), hi: min(end, idx*bs+bs)}
		if !done(pt) {
			missing = append(missing, pt)
		}
	}
	return missing
}

// holding returns block idx's known extent that holds [lo, hi), or nil.
// o.mu is held.
func (o *Object) holding(idx, lo, hi int64) *extent {
	for _, e := range o.extents[idx] {
		if e.lo <= lo && hi <= e.hi {
			return e
		}
	}
	return nil
}

// extentKnown tells whether an extent of block idx holding [lo, hi) is on
// its way or cached, as this Object knows or a file of exactly that range
// tells.
func (o *Object) extentKnown(idx, lo, hi int64) bool {
	o.mu.Lock()
	e := o.holding(idx, lo, hi)
	o.mu.Unlock()
	return e != nil || o.cache.has(where{key: o.rangeKey(lo, hi-lo)})
}

// extentCached copies bytes [lo, hi) of block idx into dst from an extent
// that holds them, fetched or cached, and reports whether it did. A cache
// file of exactly [lo, hi) from an earlier run is found too, and becomes
// known.
func (o *Object) extentCached(idx, lo, hi int64, dst []byte) bool {
	o.mu.Lock()
	found := o.holding(idx, lo, hi)
	var pd *pending
	if found != nil {
		pd = found.pd
	}
	o.mu.Unlock()
	if pd != nil {
		select {
		case <-pd.done:
			if pd.err == nil {
				copy(dst, pd.data[lo-found.lo:hi-found.lo])
				return true
			}
		default:
		}
		return false
	}
	if found == nil {
		found = &extent{lo: lo, hi: hi}
	}
	w := where{key: o.rangeKey(found.lo, found.hi-found.lo), n: found.hi - found.lo}
	ok, bad := o.cache.readRange(w, lo-found.lo, hi-found.lo, dst)
	if bad {
		o.stats.bad.Add(1)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if ok {
		o.stats.fromCache.Add(hi - lo)
		if !o.holds(idx, found) {
			o.extents[idx] = append(o.extents[idx], found)
		}
		return true
	}
	o.forget(idx, found) // evicted from the cache, or never there
	return false
}

// holds tells whether e is among block idx's known extents. o.mu is held.
func (o *Object) holds(idx int64, e *extent) bool {
	for _, x := range o.extents[idx] {
		if x == e {
			return true
		}
	}
	return false
}

// forget drops e from block idx's known extents. o.mu is held.
func (o *Object) forget(idx int64, e *extent) {
	list := o.extents[idx]
	for i, x := range list {
		if x == e {
			o.extents[idx] = append(list[:i:i], list[i+1:]...)
			return
		}
	}
}

// claimParts sets each part's pd (and off, where pd.data starts in the
// object): the fetch under way of its block or of an extent holding it,
// or a new pending the caller fetches (its index is returned). A part
// that a cached extent holds gets pd nil: the caller reads the file.
func (o *Object) claimParts(parts []part) []int {
	var owned []int
	o.mu.Lock()
	for i := range parts {
		pt := &parts[i]
		pt.pd, pt.e, pt.off = nil, nil, pt.idx*o.opt.blockSize
		if pd := o.inflight[pt.idx]; pd != nil { // the whole block is on its way
			pt.pd = pd
			continue
		}
		if o.whole(*pt) {
			pt.pd = &pending{done: make(chan struct{})}
			o.inflight[pt.idx] = pt.pd
			owned = append(owned, i)
			continue
		}
		if found := o.holding(pt.idx, pt.lo, pt.hi); found != nil {
			pt.pd, pt.off = found.pd, found.lo // nil: in the cache
			continue
		}
		pt.e = &extent{lo: pt.lo, hi: pt.hi, pd: &pending{done: make(chan struct{})}}
		pt.pd, pt.off = pt.e.pd, pt.lo
		o.extents[pt.idx] = append(o.extents[pt.idx], pt.e)
		owned = append(owned, i)
	}
	o.mu.Unlock()
	// A fetch of a claimed part may have ended, written its file and let
	// go of it between the caller's look and the claim: take it from the
	// file rather than fetch it twice.
	kept := owned[:0]
	for _, i := range owned {
		pt := &parts[i]
		w := o.where(pt.idx)
		if pt.e != nil {
			w = where{key: o.rangeKey(pt.lo, pt.hi-pt.lo), n: pt.hi - pt.lo}
		}
		data, bad := o.cache.get(w)
		if bad {
			o.stats.bad.Add(1)
		}
		if data == nil {
			kept = append(kept, i)
			continue
		}
		o.stats.fromCache.Add(int64(len(data)))
		pt.pd.data = data
		close(pt.pd.done)
		o.release(*pt)
	}
	return kept
}

// release forgets the claim of part pt once its bytes are in the cache
// (or failed): a block leaves inflight, an extent keeps only its file.
func (o *Object) release(pt part) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if pt.e == nil {
		delete(o.inflight, pt.idx)
	} else if pt.pd.err != nil {
		o.forget(pt.idx, pt.e)
	} else {
		pt.e.pd = nil
	}
}

// getParts fetches the span of parts[owned] in one GET, hands each its
// bytes and writes them to the cache in the background: whole blocks as
// blocks, other parts as extents.
func (o *Object) getParts(parts []part, owned []int) {
	lo, hi := parts[owned[0]].lo, parts[owned[len(owned)-1]].hi
	var data []byte
	var err error
	select {
	case o.sem <- struct{}{}:
		data, err = o.fetch(o.ctx, lo, hi-lo)
		<-o.sem
	case <-o.ctx.Done():
		err = &Error{URL: o.url, Op: "prefetch", Msg: "the object was closed"}
	}
	for _, i := range owned {
		pt := parts[i]
		if err != nil {
			pt.pd.err = err
		} else {
			pt.pd.data = data[pt.lo-lo : pt.hi-lo]
		}
		close(pt.pd.done)
	}
	for _, i := range owned {
		pt := parts[i]
		if err != nil {
			o.release(pt)
			continue
		}
		o.writes <- struct{}{}
		o.wg.Go(func() {
			key := o.blockKey(pt.idx)
			if pt.e != nil {
				key = o.rangeKey(pt.lo, pt.hi-pt.lo)
			}
			o.cache.put(key, pt.pd.data)
			<-o.writes
			o.release(pt)
		})
	}
}
