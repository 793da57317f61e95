//go:build !purego

#include "textflag.h"

// The outer-product micro-kernels behind GemmNN and GemmTN. A tile of C is
// 5 rows by 16 columns, held in Y0-Y9 (row r in Y(2r), Y(2r+1)). Step p
// loads 16 elements of row p of B and broadcasts A(r, p) for r < 5, where
// A(r, p) is at a + r*rs + p*cs: rs = lda, cs = 1 for GemmNN (A is m×k) and
// rs = 1, cs = lda for GemmTN (A is k×m). R8 = rs, R9 = 3*rs in bytes.

// OPSTEP does the ten FMAs of one step with B's row in Y10, Y11.
#define OPSTEP \
	VBROADCASTSS (SI), Y12;       \
	VBROADCASTSS (SI)(R8*1), Y13; \
	VFMADD231PS  Y10, Y12, Y0;    \
	VFMADD231PS  Y11, Y12, Y1;    \
	VFMADD231PS  Y10, Y13, Y2;    \
	VFMADD231PS  Y11, Y13, Y3;    \
	VBROADCASTSS (SI)(R8*2), Y12; \
	VBROADCASTSS (SI)(R9*1), Y13; \
	VFMADD231PS  Y10, Y12, Y4;    \
	VFMADD231PS  Y11, Y12, Y5;    \
	VFMADD231PS  Y10, Y13, Y6;    \
	VFMADD231PS  Y11, Y13, Y7;    \
	VBROADCASTSS (SI)(R8*4), Y12; \
	VFMADD231PS  Y10, Y12, Y8;    \
	VFMADD231PS  Y11, Y12, Y9

// OPSETUP loads the arguments shared by both kernels.
#define OPSETUP \
	MOVQ tiles+0(FP), AX;   \
	MOVQ a+16(FP), BX;      \
	MOVQ rs+24(FP), R8;     \
	SHLQ $2, R8;            \
	LEAQ (R8)(R8*2), R9;    \
	MOVQ cs+32(FP), R10;    \
	SHLQ $2, R10;           \
	MOVQ ldb+48(FP), R11;   \
	SHLQ $2, R11;           \
	MOVQ c+56(FP), DI;      \
	MOVQ ldc+64(FP), R12;   \
	SHLQ $2, R12;           \
	LEAQ (R12)(R12*2), R13

// OPZERO clears the accumulators and points SI, DX, CX at the tile's start.
#define OPZERO \
	MOVQ   BX, SI;       \
	MOVQ   b+40(FP), DX; \
	MOVQ   k+8(FP), CX;  \
	VXORPS Y0, Y0, Y0;   \
	VXORPS Y1, Y1, Y1;   \
	VXORPS Y2, Y2, Y2;   \
	VXORPS Y3, Y3, Y3;   \
	VXORPS Y4, Y4, Y4;   \
	VXORPS Y5, Y5, Y5;   \
	VXORPS Y6, Y6, Y6;   \
	VXORPS Y7, Y7, Y7;   \
	VXORPS Y8, Y8, Y8;   \
	VXORPS Y9, Y9, Y9

// OPNEXT moves A and C on by five rows.
#define OPNEXT \
	LEAQ (BX)(R8*4), BX;  \
	ADDQ R8, BX;          \
	LEAQ (DI)(R12*4), DI; \
	ADDQ R12, DI;         \
	DECQ AX

// func opKernel5x16(tiles, k int, a *float32, rs, cs int, b *float32, ldb int, c *float32, ldc int, acc bool)
//
// For t < tiles, C rows 5t..5t+4, columns 0..15: C[i*ldc+j] = sum over
// p < k of A(i, p)*B[p*ldb+j] (added to C when acc). k >= 1.
TEXT ·opKernel5x16(SB), NOSPLIT, $0-73
	OPSETUP

tile:
	TESTQ AX, AX
	JZ    done
	OPZERO

step:
	VMOVUPS (DX), Y10
	VMOVUPS 32(DX), Y11
	OPSTEP
	ADDQ    R10, SI
	ADDQ    R11, DX
	DECQ    CX
	JNZ     step

	CMPB   acc+72(FP), $0
	JEQ    store
	VADDPS (DI), Y0, Y0
	VADDPS 32(DI), Y1, Y1
	VADDPS (DI)(R12*1), Y2, Y2
	VADDPS 32(DI)(R12*1), Y3, Y3
	VADDPS (DI)(R12*2), Y4, Y4
	VADDPS 32(DI)(R12*2), Y5, Y5
	VADDPS (DI)(R13*1), Y6, Y6
	VADDPS 32(DI)(R13*1), Y7, Y7
	VADDPS (DI)(R12*4), Y8, Y8
	VADDPS 32(DI)(R12*4), Y9, Y9

store:
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, (DI)(R12*1)
	VMOVUPS Y3, 32(DI)(R12*1)
	VMOVUPS Y4, (DI)(R12*2)
	VMOVUPS Y5, 32(DI)(R12*2)
	VMOVUPS Y6, (DI)(R13*1)
	VMOVUPS Y7, 32(DI)(R13*1)
	VMOVUPS Y8, (DI)(R12*4)
	VMOVUPS Y9, 32(DI)(R12*4)
	OPNEXT
	JMP     tile

done:
	VZEROUPPER
	RET

// func opKernel5x16Mask(tiles, k int, a *float32, rs, cs int, b *float32, ldb int, c *float32, ldc int, mask *int32, acc bool)
//
// opKernel5x16 for a panel narrower than 16 columns: mask points at 16
// int32 lanes, -1 for a column to compute and 0 past the panel's end. B and
// C are read and C written only under the mask.
TEXT ·opKernel5x16Mask(SB), NOSPLIT, $0-81
	OPSETUP
	MOVQ    mask+72(FP), R14
	VMOVUPS (R14), Y14
	VMOVUPS 32(R14), Y15

tile:
	TESTQ AX, AX
	JZ    done
	OPZERO

step:
	VMASKMOVPS (DX), Y14, Y10
	VMASKMOVPS 32(DX), Y15, Y11
	OPSTEP
	ADDQ       R10, SI
	ADDQ       R11, DX
	DECQ       CX
	JNZ        step

	CMPB       acc+80(FP), $0
	JEQ        store
	VMASKMOVPS (DI), Y14, Y10
	VMASKMOVPS 32(DI), Y15, Y11
	VADDPS     Y10, Y0, Y0
	VADDPS     Y11, Y1, Y1
	VMASKMOVPS (DI)(R12*1), Y14, Y10
	VMASKMOVPS 32(DI)(R12*1), Y15, Y11
	VADDPS     Y10, Y2, Y2
	VADDPS     Y11, Y3, Y3
	VMASKMOVPS (DI)(R12*2), Y14, Y10
	VMASKMOVPS 32(DI)(R12*2), Y15, Y11
	VADDPS     Y10, Y4, Y4
	VADDPS     Y11, Y5, Y5
	VMASKMOVPS (DI)(R13*1), Y14, Y10
	VMASKMOVPS 32(DI)(R13*1), Y15, Y11
	VADDPS     Y10, Y6, Y6
	VADDPS     Y11, Y7, Y7
	VMASKMOVPS (DI)(R12*4), Y14, Y10
	VMASKMOVPS 32(DI)(R12*4), Y15, Y11
	VADDPS     Y10, Y8, Y8
	VADDPS     Y11, Y9, Y9

store:
	VMASKMOVPS Y0, Y14, (DI)
	VMASKMOVPS Y1, Y15, 32(DI)
	VMASKMOVPS Y2, Y14, (DI)(R12*1)
	VMASKMOVPS Y3, Y15, 32(DI)(R12*1)
	VMASKMOVPS Y4, Y14, (DI)(R12*2)
	VMASKMOVPS Y5, Y15, 32(DI)(R12*2)
	VMASKMOVPS Y6, Y14, (DI)(R13*1)
	VMASKMOVPS Y7, Y15, 32(DI)(R13*1)
	VMASKMOVPS Y8, Y14, (DI)(R12*4)
	VMASKMOVPS Y9, Y15, 32(DI)(R12*4)
	OPNEXT
	JMP        tile

done:
	VZEROUPPER
	RET
