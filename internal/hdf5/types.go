package hdf5

import (
	"errors"
	"fmt"
)

// ErrFormat marks a file that is not valid HDF5 (or is damaged).
var ErrFormat = errors.New("hdf5: not a valid HDF5 file")

// ErrUnsupported marks valid HDF5 that this package does not read.
var ErrUnsupported = errors.New("hdf5: unsupported")

// ErrNotFound marks a path that names nothing.
var ErrNotFound = errors.New("not found")

func formatErr(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrFormat}, a...)...)
}

func unsupported(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrUnsupported}, a...)...)
}

// Class is the kind of an element type.
type Class int

// The element classes this package reads and writes.
const (
	Int       Class = iota // signed little-endian integer
	Uint                   // unsigned little-endian integer
	Float                  // IEEE little-endian float
	String                 // fixed-length string
	Opaque                 // fixed-length bytes (numpy "V" types)
	VarString              // variable-length string (h5py's str); attributes only
)

// Type is the element type of a dataset or attribute.
type Type struct {
	Class Class
	Size  int // bytes per element
}

// The common types.
var (
	Int64   = Type{Int, 8}
	Int32   = Type{Int, 4}
	Uint8   = Type{Uint, 1}
	Float32 = Type{Float, 4}
	Float64 = Type{Float, 8}
)

func (t Type) String() string {
	switch t.Class {
	case Int:
		return fmt.Sprintf("int%d", 8*t.Size)
	case Uint:
		return fmt.Sprintf("uint%d", 8*t.Size)
	case Float:
		return fmt.Sprintf("float%d", 8*t.Size)
	case String:
		return fmt.Sprintf("string(%d)", t.Size)
	case VarString:
		return "variable-length string"
	default:
		return fmt.Sprintf("opaque(%d)", t.Size)
	}
}

const undef = ^uint64(0) // HDF5's undefined address

var signature = []byte{0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'}

// Message types used here.
const (
	msgNil         = 0x00
	msgDataspace   = 0x01
	msgLinkInfo    = 0x02
	msgDatatype    = 0x03
	msgFillOld     = 0x04
	msgFill        = 0x05
	msgLink        = 0x06
	msgExternal    = 0x07
	msgLayout      = 0x08
	msgGroupInfo   = 0x0a
	msgFilters     = 0x0b
	msgAttribute   = 0x0c
	msgContinue    = 0x10
	msgSymbolTable = 0x11
	msgAttrInfo    = 0x15
)
