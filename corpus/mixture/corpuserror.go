package mixture

import "fmt"

// CorpusError is an error met reading one corpus of a mixture: New, Next,
// NextK, Seek and Restore wrap a corpus's Source errors in it, so that a
// caller can tell which corpus failed (the server names the request's
// file) without parsing the message.
type CorpusError struct {
	Corpus int    // the corpus's index in the list given to New
	Name   string // its Corpus.Name
	Err    error
}

func (e *CorpusError) Error() string {
	return fmt.Sprintf("corpus %d (%s): %v", e.Corpus, e.Name, e.Err)
}

func (e *CorpusError) Unwrap() error { return e.Err }
