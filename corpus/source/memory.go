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
// is so large that the limit would leave less than a quarter of the headroom
// above the live data, the limit is raised to heapBefore + windowBytes +
// Headroom/4: a soft limit far below the live heap only makes the collector
// run without freeing anything.
func MemoryLimit(heapBefore, windowBytes int64) int64 {
	limit := windowBytes + Headroom - ProcessReserve
	return max(limit, heapBefore+windowBytes+Headroom/4)
}
