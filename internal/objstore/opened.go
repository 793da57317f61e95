package objstore

import "context"

// Opened opens each object once for one command and closes them together,
// so that every step of the command (detecting a format, inferring
// columns, reading) shares one HEAD and reads the version it saw.
type Opened struct {
	opt Options
	m   map[string]*Object
}

// NewOpened returns an empty set that opens objects with opt.
func NewOpened(opt Options) *Opened { return &Opened{opt: opt, m: map[string]*Object{}} }

// Open returns the object at url, opening it the first time.
func (s *Opened) Open(ctx context.Context, url string) (*Object, error) {
	if o := s.m[url]; o != nil {
		return o, nil
	}
	o, err := Open(ctx, url, s.opt)
	if err != nil {
		return nil, err
	}
	s.m[url] = o
	return o, nil
}

// Close closes every object opened, after their readers.
func (s *Opened) Close() {
	for _, o := range s.m {
		o.Close()
	}
}

// Kept is an Object whose Close leaves it open, for readers that close
// what they are given when the Object belongs to an Opened set.
type Kept struct{ *Object }

// Close does nothing: the Object's owner closes it.
func (Kept) Close() error { return nil }
