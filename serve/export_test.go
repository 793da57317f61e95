package serve

// OpenReadersForTest reports the cached readers and how many are in use.
func (s *Server) OpenReadersForTest() (n, inUse int) { return s.readers.open() }
