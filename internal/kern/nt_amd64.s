//go:build !purego

#include "textflag.h"

// ntMask: see vecMask in vec_amd64.s.
DATA ntMask<>+0x00(SB)/8, $0xffffffffffffffff
DATA ntMask<>+0x08(SB)/8, $0xffffffffffffffff
DATA ntMask<>+0x10(SB)/8, $0xffffffffffffffff
DATA ntMask<>+0x18(SB)/8, $0xffffffffffffffff
DATA ntMask<>+0x20(SB)/8, $0
DATA ntMask<>+0x28(SB)/8, $0
DATA ntMask<>+0x30(SB)/8, $0
DATA ntMask<>+0x38(SB)/8, $0
GLOBL ntMask<>(SB), RODATA|NOPTR, $64

// NTROW multiplies the B vector in Y15 into the accumulators of the three
// A rows held in Y12, Y13, Y14.
#define NTROW(acc0, acc1, acc2) \
	VFMADD231PS Y15, Y12, acc0; \
	VFMADD231PS Y15, Y13, acc1; \
	VFMADD231PS Y15, Y14, acc2

// REDUCE4 folds four accumulators into one XMM of their four sums, in the
// first register (t is the first register's XMM, u the second's).
#define REDUCE4(y0, y1, y2, y3, x0, x1) \
	VHADDPS      y1, y0, y0; \
	VHADDPS      y3, y2, y2; \
	VHADDPS      y2, y0, y0; \
	VEXTRACTF128 $1, y0, x1; \
	VADDPS       x1, x0, x0

// func ntKernel3x4(groups, k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int, acc bool)
//
// For g < groups and r < 3, row i = 3g+r of A and rows j < 4 of B:
// C[i*ldc+j] = sum over p < k of A[i*lda+p]*B[j*ldb+p] (added to C when acc).
// k >= 1.
TEXT ·ntKernel3x4(SB), NOSPLIT, $0-65
	MOVQ groups+0(FP), AX
	MOVQ a+16(FP), BX
	MOVQ lda+24(FP), R8
	SHLQ $2, R8
	MOVQ ldb+40(FP), R9
	SHLQ $2, R9
	LEAQ (R9)(R9*2), R10
	MOVQ c+48(FP), DI
	MOVQ ldc+56(FP), R12
	SHLQ $2, R12
	MOVQ k+8(FP), R13
	ANDQ $7, R13
	SHLQ $2, R13
	LEAQ ntMask<>+32(SB), R11
	SUBQ R13, R11

group:
	TESTQ  AX, AX
	JZ     done
	MOVQ   BX, SI
	MOVQ   b+32(FP), DX
	MOVQ   k+8(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	CMPQ   CX, $8
	JLT    tail

by8:
	VMOVUPS (SI), Y12
	VMOVUPS (SI)(R8*1), Y13
	VMOVUPS (SI)(R8*2), Y14
	VMOVUPS (DX), Y15
	NTROW(Y0, Y4, Y8)
	VMOVUPS (DX)(R9*1), Y15
	NTROW(Y1, Y5, Y9)
	VMOVUPS (DX)(R9*2), Y15
	NTROW(Y2, Y6, Y10)
	VMOVUPS (DX)(R10*1), Y15
	NTROW(Y3, Y7, Y11)
	ADDQ    $32, SI
	ADDQ    $32, DX
	SUBQ    $8, CX
	CMPQ    CX, $8
	JGE     by8

tail:
	TESTQ      CX, CX
	JZ         reduce
	VMOVUPS    (R11), Y15
	VMASKMOVPS (SI), Y15, Y12
	VMASKMOVPS (SI)(R8*1), Y15, Y13
	VMASKMOVPS (SI)(R8*2), Y15, Y14
	VMASKMOVPS (DX), Y15, Y15
	NTROW(Y0, Y4, Y8)
	VMOVUPS    (R11), Y15
	VMASKMOVPS (DX)(R9*1), Y15, Y15
	NTROW(Y1, Y5, Y9)
	VMOVUPS    (R11), Y15
	VMASKMOVPS (DX)(R9*2), Y15, Y15
	NTROW(Y2, Y6, Y10)
	VMOVUPS    (R11), Y15
	VMASKMOVPS (DX)(R10*1), Y15, Y15
	NTROW(Y3, Y7, Y11)

reduce:
	REDUCE4(Y0, Y1, Y2, Y3, X0, X1)
	REDUCE4(Y4, Y5, Y6, Y7, X4, X5)
	REDUCE4(Y8, Y9, Y10, Y11, X8, X9)
	CMPB   acc+64(FP), $0
	JEQ    store
	VADDPS (DI), X0, X0
	VADDPS (DI)(R12*1), X4, X4
	VADDPS (DI)(R12*2), X8, X8

store:
	VMOVUPS X0, (DI)
	VMOVUPS X4, (DI)(R12*1)
	VMOVUPS X8, (DI)(R12*2)
	LEAQ    (BX)(R8*2), BX
	ADDQ    R8, BX
	LEAQ    (DI)(R12*2), DI
	ADDQ    R12, DI
	DECQ    AX
	JMP     group

done:
	VZEROUPPER
	RET

// func ntKernel1x4(rows, k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int, acc bool)
//
// ntKernel3x4 for one row of A at a time, rows times; eight accumulators
// (two per B row, for even and odd steps of 8) hide the FMA latency.
TEXT ·ntKernel1x4(SB), NOSPLIT, $0-65
	MOVQ rows+0(FP), AX
	MOVQ a+16(FP), BX
	MOVQ lda+24(FP), R8
	SHLQ $2, R8
	MOVQ ldb+40(FP), R9
	SHLQ $2, R9
	LEAQ (R9)(R9*2), R10
	MOVQ c+48(FP), DI
	MOVQ ldc+56(FP), R12
	SHLQ $2, R12
	MOVQ k+8(FP), R13
	ANDQ $7, R13
	SHLQ $2, R13
	LEAQ ntMask<>+32(SB), R11
	SUBQ R13, R11

row:
	TESTQ  AX, AX
	JZ     done
	MOVQ   BX, SI
	MOVQ   b+32(FP), DX
	MOVQ   k+8(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	CMPQ   CX, $16
	JLT    by8

by16:
	VMOVUPS     (SI), Y12
	VMOVUPS     32(SI), Y13
	VFMADD231PS (DX), Y12, Y0
	VFMADD231PS (DX)(R9*1), Y12, Y1
	VFMADD231PS (DX)(R9*2), Y12, Y2
	VFMADD231PS (DX)(R10*1), Y12, Y3
	VFMADD231PS 32(DX), Y13, Y4
	VFMADD231PS 32(DX)(R9*1), Y13, Y5
	VFMADD231PS 32(DX)(R9*2), Y13, Y6
	VFMADD231PS 32(DX)(R10*1), Y13, Y7
	ADDQ        $64, SI
	ADDQ        $64, DX
	SUBQ        $16, CX
	CMPQ        CX, $16
	JGE         by16

by8:
	CMPQ        CX, $8
	JLT         tail
	VMOVUPS     (SI), Y12
	VFMADD231PS (DX), Y12, Y0
	VFMADD231PS (DX)(R9*1), Y12, Y1
	VFMADD231PS (DX)(R9*2), Y12, Y2
	VFMADD231PS (DX)(R10*1), Y12, Y3
	ADDQ        $32, SI
	ADDQ        $32, DX
	SUBQ        $8, CX

tail:
	TESTQ       CX, CX
	JZ          reduce
	VMOVUPS     (R11), Y15
	VMASKMOVPS  (SI), Y15, Y12
	VMASKMOVPS  (DX), Y15, Y13
	VFMADD231PS Y13, Y12, Y4
	VMASKMOVPS  (DX)(R9*1), Y15, Y13
	VFMADD231PS Y13, Y12, Y5
	VMASKMOVPS  (DX)(R9*2), Y15, Y13
	VFMADD231PS Y13, Y12, Y6
	VMASKMOVPS  (DX)(R10*1), Y15, Y13
	VFMADD231PS Y13, Y12, Y7

reduce:
	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS Y6, Y2, Y2
	VADDPS Y7, Y3, Y3
	REDUCE4(Y0, Y1, Y2, Y3, X0, X1)
	CMPB   acc+64(FP), $0
	JEQ    store
	VADDPS (DI), X0, X0

store:
	VMOVUPS X0, (DI)
	ADDQ    R8, BX
	ADDQ    R12, DI
	DECQ    AX
	JMP     row

done:
	VZEROUPPER
	RET
