package serve

// OpenReadersForTest reports the cached readers and how many are in use.
func (s *Server) OpenReadersForTest() (n, inUse int) { return s.readers.open() }

// WaitingCallsForTest reports the calls waiting for a slot.
func (s *Server) WaitingCallsForTest() int { return int(s.calls.waiting.Load()) }
