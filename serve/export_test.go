package serve

// OpenReadersForTest reports the cached readers and how many are in use.
func (s *Server) OpenReadersForTest() (n, inUse int) { return s.readers.open() }

// WaitingCallsForTest reports the calls waiting for a slot.
func (s *Server) WaitingCallsForTest() int { return s.calls.waiting() }

// IdleTrimsForTest counts the times the idle server gave memory back.
func (s *Server) IdleTrimsForTest() int64 { return s.idle.trims.Load() }

// IndexPassesForTest reports the index passes in progress and the calls
// waiting for them.
func (s *Server) IndexPassesForTest() (passes, waiters int) { return s.readers.running() }

// SetIndexProgressForTest makes fn hear of each block an index pass reads;
// call it before the first call.
func (s *Server) SetIndexProgressForTest(fn func(n int64)) { s.readers.setProgress(fn) }

// IndexPassesStartedForTest counts the index passes started.
func (s *Server) IndexPassesStartedForTest() int { return s.readers.indexed() }

// ExactObjectsForTest counts the cached readers of objects and those whose
// object reads exactly.
func (s *Server) ExactObjectsForTest() (exact, objects int) {
	s.readers.mu.Lock()
	defer s.readers.mu.Unlock()
	for _, e := range s.readers.entries {
		if e.exactable != nil {
			objects++
			if e.exactable.Exact() {
				exact++
			}
		}
	}
	return exact, objects
}
