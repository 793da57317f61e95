//go:build !purego

#include "textflag.h"

// vecMask holds eight all-ones lanes then eight zero lanes: the eight lanes
// at vecMask+4*(8-r) are a VMASKMOVPS mask selecting the first r elements.
DATA vecMask<>+0x00(SB)/8, $0xffffffffffffffff
DATA vecMask<>+0x08(SB)/8, $0xffffffffffffffff
DATA vecMask<>+0x10(SB)/8, $0xffffffffffffffff
DATA vecMask<>+0x18(SB)/8, $0xffffffffffffffff
DATA vecMask<>+0x20(SB)/8, $0
DATA vecMask<>+0x28(SB)/8, $0
DATA vecMask<>+0x30(SB)/8, $0
DATA vecMask<>+0x38(SB)/8, $0
GLOBL vecMask<>(SB), RODATA|NOPTR, $64

// func dotAVX(a, b *float32, n int) float32
TEXT ·dotAVX(SB), NOSPLIT, $0-28
	MOVQ   a+0(FP), SI
	MOVQ   b+8(FP), DX
	MOVQ   n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	CMPQ   CX, $32
	JLT    by8

by32:
	VMOVUPS     (SI), Y4
	VMOVUPS     32(SI), Y5
	VMOVUPS     64(SI), Y6
	VMOVUPS     96(SI), Y7
	VFMADD231PS (DX), Y4, Y0
	VFMADD231PS 32(DX), Y5, Y1
	VFMADD231PS 64(DX), Y6, Y2
	VFMADD231PS 96(DX), Y7, Y3
	ADDQ        $128, SI
	ADDQ        $128, DX
	SUBQ        $32, CX
	CMPQ        CX, $32
	JGE         by32

by8:
	CMPQ        CX, $8
	JLT         tail
	VMOVUPS     (SI), Y4
	VFMADD231PS (DX), Y4, Y0
	ADDQ        $32, SI
	ADDQ        $32, DX
	SUBQ        $8, CX
	JMP         by8

tail:
	TESTQ       CX, CX
	JZ          sum
	LEAQ        vecMask<>+32(SB), AX
	SHLQ        $2, CX
	SUBQ        CX, AX
	VMOVUPS     (AX), Y8
	VMASKMOVPS  (SI), Y8, Y4
	VMASKMOVPS  (DX), Y8, Y5
	VFMADD231PS Y5, Y4, Y1

sum:
	VADDPS       Y1, Y0, Y0
	VADDPS       Y3, Y2, Y2
	VADDPS       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+24(FP)
	RET

// func axpyAVX(alpha float32, x, y *float32, n int)
TEXT ·axpyAVX(SB), NOSPLIT, $0-32
	MOVSS        alpha+0(FP), X15
	VBROADCASTSS X15, Y15
	MOVQ         x+8(FP), SI
	MOVQ         y+16(FP), DI
	MOVQ         n+24(FP), CX
	CMPQ         CX, $32
	JLT          by8

by32:
	VMOVUPS     (DI), Y0
	VMOVUPS     32(DI), Y1
	VMOVUPS     64(DI), Y2
	VMOVUPS     96(DI), Y3
	VFMADD231PS (SI), Y15, Y0
	VFMADD231PS 32(SI), Y15, Y1
	VFMADD231PS 64(SI), Y15, Y2
	VFMADD231PS 96(SI), Y15, Y3
	VMOVUPS     Y0, (DI)
	VMOVUPS     Y1, 32(DI)
	VMOVUPS     Y2, 64(DI)
	VMOVUPS     Y3, 96(DI)
	ADDQ        $128, SI
	ADDQ        $128, DI
	SUBQ        $32, CX
	CMPQ        CX, $32
	JGE         by32

by8:
	CMPQ        CX, $8
	JLT         tail
	VMOVUPS     (DI), Y0
	VFMADD231PS (SI), Y15, Y0
	VMOVUPS     Y0, (DI)
	ADDQ        $32, SI
	ADDQ        $32, DI
	SUBQ        $8, CX
	JMP         by8

tail:
	TESTQ       CX, CX
	JZ          done
	LEAQ        vecMask<>+32(SB), AX
	SHLQ        $2, CX
	SUBQ        CX, AX
	VMOVUPS     (AX), Y8
	VMASKMOVPS  (SI), Y8, Y4
	VMASKMOVPS  (DI), Y8, Y5
	VFMADD231PS Y4, Y15, Y5

	// store the r = 4a + 2b + c (r < 8) lanes of Y5 with plain stores:
	// a masked store to memory costs tens of cycles on AMD cores.
	SHRQ         $2, CX
	CMPQ         CX, $4
	JLT          st2
	VMOVUPS      X5, (DI)
	VEXTRACTF128 $1, Y5, X5
	ADDQ         $16, DI
	SUBQ         $4, CX

st2:
	CMPQ    CX, $2
	JLT     st1
	VMOVSD  X5, (DI)
	VPSRLDQ $8, X5, X5
	ADDQ    $8, DI
	SUBQ    $2, CX

st1:
	TESTQ  CX, CX
	JZ     done
	VMOVSS X5, (DI)

done:
	VZEROUPPER
	RET
