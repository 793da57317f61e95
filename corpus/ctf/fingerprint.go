package ctf

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"strconv"
)

// fingerprintEdge is how much of each end of the file Fingerprint hashes.
const fingerprintEdge = 64 << 10

// Fingerprint identifies the file and the reader settings that shape the
// layout, for the minibatch source's state (it implements the optional
// source.Fingerprinter). Keys:
//
//	file_size          the size in bytes at Open
//	file_edges_sha256  the first 32 hex digits of a SHA-256 of the first
//	                   64 KiB and of the last 64 KiB (the bytes after the
//	                   first 64 KiB when the file is shorter than 128 KiB)
//	defines_mb_size    Config.DefinesMBSize ("" when unset)
//	label              Config.Label ("" when unset)
//	chunking           "N sequences" or "N bytes" (the effective chunk size)
//	line_mode          "true", only when Config.LineMode forces line mode
//
// The streams are fingerprinted by the source itself; the error budget, the
// cache settings, the path and the modification time are not part of it, so
// a copied or renamed corpus still resumes. The keys and values are those
// `batchprep read` computed in round 1, so its state files stay valid.
func (r *Reader) Fingerprint() map[string]string { return maps.Clone(r.fp) }

// fingerprint computes the Fingerprint map (called once, by Open).
func (r *Reader) fingerprint() error {
	st, err := r.f.Stat()
	if err != nil {
		return fmt.Errorf("ctf: %w", err)
	}
	size := st.Size()
	h := sha256.New()
	head := make([]byte, min(fingerprintEdge, size))
	if _, err := r.f.ReadAt(head, 0); err != nil && err != io.EOF {
		return fmt.Errorf("ctf: %s: %w", r.path, err)
	}
	h.Write(head)
	if size > fingerprintEdge {
		tail := make([]byte, min(fingerprintEdge, size-fingerprintEdge))
		if _, err := r.f.ReadAt(tail, size-int64(len(tail))); err != nil && err != io.EOF {
			return fmt.Errorf("ctf: %s: %w", r.path, err)
		}
		h.Write(tail)
	}
	fp := map[string]string{
		"file_size":         strconv.FormatInt(size, 10),
		"file_edges_sha256": hex.EncodeToString(h.Sum(nil))[:32],
		"defines_mb_size":   r.cfg.DefinesMBSize,
		"label":             r.cfg.Label,
	}
	if r.cfg.ChunkSequences > 0 {
		fp["chunking"] = strconv.Itoa(r.cfg.ChunkSequences) + " sequences"
	} else {
		fp["chunking"] = strconv.FormatInt(r.cfg.chunkBytes(), 10) + " bytes"
	}
	if r.cfg.LineMode {
		fp["line_mode"] = "true"
	}
	r.fp = fp
	return nil
}
