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

// func opKernel5x16Mask(tiles, k int, a *float32, rs, cs int, b *float32, ldb int, c *float32, ldc int, mask *int32, w int, scratch *float32, acc bool)
//
// opKernel5x16 for a panel of w <= 16 columns: mask points at 16 int32
// lanes, -1 for the first w and 0 after. B and C are read under the mask.
// A tile is stored whole into scratch (80 floats) and its first w columns
// copied to C with plain stores, since a masked store (VMASKMOVPS to
// memory) costs tens of cycles on AMD cores.
TEXT ·opKernel5x16Mask(SB), NOSPLIT, $0-97
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

	CMPB       acc+96(FP), $0
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
	MOVQ    scratch+88(FP), SI
	VMOVUPS Y0, (SI)
	VMOVUPS Y1, 32(SI)
	VMOVUPS Y2, 64(SI)
	VMOVUPS Y3, 96(SI)
	VMOVUPS Y4, 128(SI)
	VMOVUPS Y5, 160(SI)
	VMOVUPS Y6, 192(SI)
	VMOVUPS Y7, 224(SI)
	VMOVUPS Y8, 256(SI)
	VMOVUPS Y9, 288(SI)
	MOVQ    DI, DX
	MOVQ    $5, CX

row:
	// copy w = 8a + 4b + 2c + d floats of one row (w <= 16)
	MOVQ w+80(FP), R14
	XORQ R15, R15

by8:
	CMPQ    R14, $8
	JLT     by4
	VMOVUPS (SI)(R15*1), Y10
	VMOVUPS Y10, (DX)(R15*1)
	ADDQ    $32, R15
	SUBQ    $8, R14
	JMP     by8

by4:
	CMPQ    R14, $4
	JLT     by2
	VMOVUPS (SI)(R15*1), X10
	VMOVUPS X10, (DX)(R15*1)
	ADDQ    $16, R15
	SUBQ    $4, R14

by2:
	CMPQ   R14, $2
	JLT    by1
	VMOVSD (SI)(R15*1), X10
	VMOVSD X10, (DX)(R15*1)
	ADDQ   $8, R15
	SUBQ   $2, R14

by1:
	TESTQ  R14, R14
	JZ     rowdone
	VMOVSS (SI)(R15*1), X10
	VMOVSS X10, (DX)(R15*1)

rowdone:
	ADDQ $64, SI
	ADDQ R12, DX
	DECQ CX
	JNZ  row
	OPNEXT
	JMP  tile

done:
	VZEROUPPER
	RET

// OPSTEP8 does the ten FMAs of one step of a 10×8 tile, B's row in Y10;
// rows 0-4 of A are at SI + r*rs, rows 5-9 at R14 + (r-5)*rs.
#define OPSTEP8 \
	VBROADCASTSS (SI), Y11;        \
	VBROADCASTSS (SI)(R8*1), Y12;  \
	VFMADD231PS  Y10, Y11, Y0;     \
	VFMADD231PS  Y10, Y12, Y1;     \
	VBROADCASTSS (SI)(R8*2), Y11;  \
	VBROADCASTSS (SI)(R9*1), Y12;  \
	VFMADD231PS  Y10, Y11, Y2;     \
	VFMADD231PS  Y10, Y12, Y3;     \
	VBROADCASTSS (SI)(R8*4), Y11;  \
	VBROADCASTSS (R14), Y12;       \
	VFMADD231PS  Y10, Y11, Y4;     \
	VFMADD231PS  Y10, Y12, Y5;     \
	VBROADCASTSS (R14)(R8*1), Y11; \
	VBROADCASTSS (R14)(R8*2), Y12; \
	VFMADD231PS  Y10, Y11, Y6;     \
	VFMADD231PS  Y10, Y12, Y7;     \
	VBROADCASTSS (R14)(R9*1), Y11; \
	VBROADCASTSS (R14)(R8*4), Y12; \
	VFMADD231PS  Y10, Y11, Y8;     \
	VFMADD231PS  Y10, Y12, Y9

// CACC8 adds the masked C row at addr to acc (Y11 is scratch).
#define CACC8(addr, acc) \
	VMASKMOVPS addr, Y15, Y11; \
	VADDPS     Y11, acc, acc

// func opKernel10x8Mask(tiles, k int, a *float32, rs, cs int, b *float32, ldb int, c *float32, ldc int, mask *int32, w int, scratch *float32, acc bool)
//
// opKernel5x16Mask for a last panel of w <= 8 columns, ten rows per tile
// (row r in Y(r)), so that a narrow panel costs half a 16-wide one: for
// t < tiles, C rows 10t..10t+9, columns 0..w-1. mask's first 8 lanes
// select the w columns; tiles go through scratch (80 floats) to C.
TEXT ·opKernel10x8Mask(SB), NOSPLIT, $0-97
	OPSETUP
	MOVQ    mask+72(FP), R14
	VMOVUPS (R14), Y15

tile:
	TESTQ  AX, AX
	JZ     done
	OPZERO
	LEAQ   (BX)(R8*4), R14
	ADDQ   R8, R14

step:
	VMASKMOVPS (DX), Y15, Y10
	OPSTEP8
	ADDQ       R10, SI
	ADDQ       R10, R14
	ADDQ       R11, DX
	DECQ       CX
	JNZ        step

	CMPB acc+96(FP), $0
	JEQ  store
	LEAQ (DI)(R12*4), R15
	ADDQ R12, R15
	CACC8((DI), Y0)
	CACC8((DI)(R12*1), Y1)
	CACC8((DI)(R12*2), Y2)
	CACC8((DI)(R13*1), Y3)
	CACC8((DI)(R12*4), Y4)
	CACC8((R15), Y5)
	CACC8((R15)(R12*1), Y6)
	CACC8((R15)(R12*2), Y7)
	CACC8((R15)(R13*1), Y8)
	CACC8((R15)(R12*4), Y9)

store:
	MOVQ    scratch+88(FP), SI
	VMOVUPS Y0, (SI)
	VMOVUPS Y1, 32(SI)
	VMOVUPS Y2, 64(SI)
	VMOVUPS Y3, 96(SI)
	VMOVUPS Y4, 128(SI)
	VMOVUPS Y5, 160(SI)
	VMOVUPS Y6, 192(SI)
	VMOVUPS Y7, 224(SI)
	VMOVUPS Y8, 256(SI)
	VMOVUPS Y9, 288(SI)
	MOVQ    DI, DX
	MOVQ    $10, CX

row:
	// copy w = 8a + 4b + 2c + d floats of one row (w <= 8)
	MOVQ w+80(FP), R14
	XORQ R15, R15
	CMPQ R14, $8
	JLT  by4
	VMOVUPS (SI), Y10
	VMOVUPS Y10, (DX)
	JMP     rowdone

by4:
	CMPQ    R14, $4
	JLT     by2
	VMOVUPS (SI)(R15*1), X10
	VMOVUPS X10, (DX)(R15*1)
	ADDQ    $16, R15
	SUBQ    $4, R14

by2:
	CMPQ   R14, $2
	JLT    by1
	VMOVSD (SI)(R15*1), X10
	VMOVSD X10, (DX)(R15*1)
	ADDQ   $8, R15
	SUBQ   $2, R14

by1:
	TESTQ  R14, R14
	JZ     rowdone
	VMOVSS (SI)(R15*1), X10
	VMOVSS X10, (DX)(R15*1)

rowdone:
	ADDQ $32, SI
	ADDQ R12, DX
	DECQ CX
	JNZ  row
	LEAQ (BX)(R8*8), BX
	LEAQ (BX)(R8*2), BX
	LEAQ (DI)(R12*8), DI
	LEAQ (DI)(R12*2), DI
	DECQ AX
	JMP  tile

done:
	VZEROUPPER
	RET
