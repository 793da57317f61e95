package source

// Headroom is what the memory bound of a read allows beyond the window: the
// peak heap of a read should stay under ResidentChunks() x chunk bytes +
// Headroom (docs/source.md, "Memory").
const Headroom = 64 << 20

// ProcessReserve is the part of the bound MemoryLimit keeps for what the Go
// runtime's limit does not count but the machine sees in the process's
// resident set: the executable's code and data pages, and memory outside
// the Go heap. It was measured at about 2-8 MiB (peak RSS minus the limit,
// docs/performance-source.md).
const ProcessReserve = 8 << 20

// MemoryLimit returns the soft memory limit (for debug.SetMemoryLimit) that
// keeps a read within its bound of windowBytes + Headroom, where windowBytes
// is ResidentChunks() times the corpus's chunk size: the bound minus
// ProcessReserve, so that the process's resident set, not only its heap,
// stays under the bound. heapBefore is the heap in use before reading (the
// corpus index, which grows with the corpus, not the window). When the index
// leaves too little room under the bound, the limit leaves the index and
// the window the room RaiseLimit asks for instead.
func MemoryLimit(heapBefore, windowBytes int64) int64 {
	live := heapBefore + windowBytes
	return max(windowBytes+Headroom-ProcessReserve, live+minRoom(live))
}

// RaiseLimit returns the soft limit for a heap whose live data, as the
// last collection measured them, are live bytes: limit while it leaves
// them room (a quarter of them, at least Headroom/4), else live plus half
// of them. Closer to the live data the collector runs after every few MiB
// allocated, marks the whole live heap each time and frees next to
// nothing: a read of 40 M short sequences (a 1.2 GB index) ran 1.55 times
// as long in file order with a limit 16 MiB above the index as without a
// limit, and window order, whose parsed chunks outgrow the text that sized
// the limit, 1.45 times.
func RaiseLimit(limit, live int64) int64 {
	if limit >= live+minRoom(live) {
		return limit
	}
	return live + max(Headroom/4, live/2)
}

// minRoom is the least room a soft limit leaves above live bytes of live
// data.
func minRoom(live int64) int64 { return max(Headroom/4, live/4) }
