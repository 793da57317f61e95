//go:build !purego

#include "textflag.h"

// func prefetch(p unsafe.Pointer, n uintptr)
// PREFETCHT0 on each 64-byte line that [p, p+n) touches, n > 0. A prefetch
// never faults, so lines past the slice's allocation are harmless.
TEXT ·prefetch(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ n+8(FP), DX
	ADDQ AX, DX
	ANDQ $-64, AX

loop:
	PREFETCHT0 (AX)
	ADDQ       $64, AX
	CMPQ       AX, DX
	JB         loop
	RET
