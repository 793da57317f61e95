// Package hdf5 reads and writes the small part of HDF5 that
// PyTorch-BigGraph's files use: groups, contiguous (and, for reading,
// unfiltered chunked) datasets of fixed-size numbers, strings and opaque
// bytes, with scalar and string attributes. It is pure Go (no cgo).
//
// Reading accepts what h5py writes with its default settings: superblock
// version 0 or 1, version 1 object headers, groups held in a symbol table
// (a version 1 B-tree, symbol nodes and a local heap), in compact link
// messages or in dense storage (a fractal heap indexed by a version 2
// B-tree, as a creation-order group past 8 links has), and version 2
// object headers and superblocks 2 and 3 as files made with libver="latest"
// (and this package's writer) have. Filters (compression), huge heap
// objects, variable-length data other than string attributes, external
// links and virtual datasets are refused with an error naming what is
// missing, never read wrongly.
//
// Writing produces superblock version 2, version 2 object headers, groups
// as compact link messages and contiguous datasets; HDF5 1.8 and later
// (h5py 2 and 3) read it.
//
// Invariants (tests cite them by number):
//
//  1. Open(Write(tree)) returns the same groups, datasets, shapes, types,
//     values and attributes.
//  2. Files written by h5py 3 with default settings are read: the same
//     shapes, types and values as h5py reports.
//  3. Files written by this package are read by h5py (python/tests/
//     test_hdf5_pbg.py).
//  4. A damaged or foreign file is an error (ErrFormat or
//     ErrUnsupported), never a panic, and never an allocation larger than
//     the file.
package hdf5
