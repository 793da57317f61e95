//go:build !purego

#include "textflag.h"

// The vector pieces of Softmax and Scale. exp is computed as in Cephes'
// expf: n = floor(x·log2(e) + 1/2), r = x - n·ln 2 (in two parts), e^r by a
// degree-7 polynomial, times 2^n built in the exponent bits. Inputs below
// ln(FLT_MIN) give 0.

// Each constant is eight copies of one float32 (the bias: of int32 127).
#define EXP_LO expConst<>+0x000(SB)
#define EXP_LOG2E expConst<>+0x020(SB)
#define EXP_HALF expConst<>+0x040(SB)
#define EXP_C1 expConst<>+0x060(SB)
#define EXP_C2 expConst<>+0x080(SB)
#define EXP_P0 expConst<>+0x0a0(SB)
#define EXP_P1 expConst<>+0x0c0(SB)
#define EXP_P2 expConst<>+0x0e0(SB)
#define EXP_P3 expConst<>+0x100(SB)
#define EXP_P4 expConst<>+0x120(SB)
#define EXP_P5 expConst<>+0x140(SB)
#define EXP_ONE expConst<>+0x160(SB)
#define EXP_BIAS expConst<>+0x180(SB)
DATA expConst<>+0x000(SB)/4, $0xc2aeac4f
DATA expConst<>+0x004(SB)/4, $0xc2aeac4f
DATA expConst<>+0x008(SB)/4, $0xc2aeac4f
DATA expConst<>+0x00c(SB)/4, $0xc2aeac4f
DATA expConst<>+0x010(SB)/4, $0xc2aeac4f
DATA expConst<>+0x014(SB)/4, $0xc2aeac4f
DATA expConst<>+0x018(SB)/4, $0xc2aeac4f
DATA expConst<>+0x01c(SB)/4, $0xc2aeac4f
DATA expConst<>+0x020(SB)/4, $0x3fb8aa3b
DATA expConst<>+0x024(SB)/4, $0x3fb8aa3b
DATA expConst<>+0x028(SB)/4, $0x3fb8aa3b
DATA expConst<>+0x02c(SB)/4, $0x3fb8aa3b
DATA expConst<>+0x030(SB)/4, $0x3fb8aa3b
DATA expConst<>+0x034(SB)/4, $0x3fb8aa3b
DATA expConst<>+0x038(SB)/4, $0x3fb8aa3b
DATA expConst<>+0x03c(SB)/4, $0x3fb8aa3b
DATA expConst<>+0x040(SB)/4, $0x3f000000
DATA expConst<>+0x044(SB)/4, $0x3f000000
DATA expConst<>+0x048(SB)/4, $0x3f000000
DATA expConst<>+0x04c(SB)/4, $0x3f000000
DATA expConst<>+0x050(SB)/4, $0x3f000000
DATA expConst<>+0x054(SB)/4, $0x3f000000
DATA expConst<>+0x058(SB)/4, $0x3f000000
DATA expConst<>+0x05c(SB)/4, $0x3f000000
DATA expConst<>+0x060(SB)/4, $0x3f318000
DATA expConst<>+0x064(SB)/4, $0x3f318000
DATA expConst<>+0x068(SB)/4, $0x3f318000
DATA expConst<>+0x06c(SB)/4, $0x3f318000
DATA expConst<>+0x070(SB)/4, $0x3f318000
DATA expConst<>+0x074(SB)/4, $0x3f318000
DATA expConst<>+0x078(SB)/4, $0x3f318000
DATA expConst<>+0x07c(SB)/4, $0x3f318000
DATA expConst<>+0x080(SB)/4, $0xb95e8083
DATA expConst<>+0x084(SB)/4, $0xb95e8083
DATA expConst<>+0x088(SB)/4, $0xb95e8083
DATA expConst<>+0x08c(SB)/4, $0xb95e8083
DATA expConst<>+0x090(SB)/4, $0xb95e8083
DATA expConst<>+0x094(SB)/4, $0xb95e8083
DATA expConst<>+0x098(SB)/4, $0xb95e8083
DATA expConst<>+0x09c(SB)/4, $0xb95e8083
DATA expConst<>+0x0a0(SB)/4, $0x39506967
DATA expConst<>+0x0a4(SB)/4, $0x39506967
DATA expConst<>+0x0a8(SB)/4, $0x39506967
DATA expConst<>+0x0ac(SB)/4, $0x39506967
DATA expConst<>+0x0b0(SB)/4, $0x39506967
DATA expConst<>+0x0b4(SB)/4, $0x39506967
DATA expConst<>+0x0b8(SB)/4, $0x39506967
DATA expConst<>+0x0bc(SB)/4, $0x39506967
DATA expConst<>+0x0c0(SB)/4, $0x3ab743ce
DATA expConst<>+0x0c4(SB)/4, $0x3ab743ce
DATA expConst<>+0x0c8(SB)/4, $0x3ab743ce
DATA expConst<>+0x0cc(SB)/4, $0x3ab743ce
DATA expConst<>+0x0d0(SB)/4, $0x3ab743ce
DATA expConst<>+0x0d4(SB)/4, $0x3ab743ce
DATA expConst<>+0x0d8(SB)/4, $0x3ab743ce
DATA expConst<>+0x0dc(SB)/4, $0x3ab743ce
DATA expConst<>+0x0e0(SB)/4, $0x3c088908
DATA expConst<>+0x0e4(SB)/4, $0x3c088908
DATA expConst<>+0x0e8(SB)/4, $0x3c088908
DATA expConst<>+0x0ec(SB)/4, $0x3c088908
DATA expConst<>+0x0f0(SB)/4, $0x3c088908
DATA expConst<>+0x0f4(SB)/4, $0x3c088908
DATA expConst<>+0x0f8(SB)/4, $0x3c088908
DATA expConst<>+0x0fc(SB)/4, $0x3c088908
DATA expConst<>+0x100(SB)/4, $0x3d2aa9c1
DATA expConst<>+0x104(SB)/4, $0x3d2aa9c1
DATA expConst<>+0x108(SB)/4, $0x3d2aa9c1
DATA expConst<>+0x10c(SB)/4, $0x3d2aa9c1
DATA expConst<>+0x110(SB)/4, $0x3d2aa9c1
DATA expConst<>+0x114(SB)/4, $0x3d2aa9c1
DATA expConst<>+0x118(SB)/4, $0x3d2aa9c1
DATA expConst<>+0x11c(SB)/4, $0x3d2aa9c1
DATA expConst<>+0x120(SB)/4, $0x3e2aaaaa
DATA expConst<>+0x124(SB)/4, $0x3e2aaaaa
DATA expConst<>+0x128(SB)/4, $0x3e2aaaaa
DATA expConst<>+0x12c(SB)/4, $0x3e2aaaaa
DATA expConst<>+0x130(SB)/4, $0x3e2aaaaa
DATA expConst<>+0x134(SB)/4, $0x3e2aaaaa
DATA expConst<>+0x138(SB)/4, $0x3e2aaaaa
DATA expConst<>+0x13c(SB)/4, $0x3e2aaaaa
DATA expConst<>+0x140(SB)/4, $0x3f000000
DATA expConst<>+0x144(SB)/4, $0x3f000000
DATA expConst<>+0x148(SB)/4, $0x3f000000
DATA expConst<>+0x14c(SB)/4, $0x3f000000
DATA expConst<>+0x150(SB)/4, $0x3f000000
DATA expConst<>+0x154(SB)/4, $0x3f000000
DATA expConst<>+0x158(SB)/4, $0x3f000000
DATA expConst<>+0x15c(SB)/4, $0x3f000000
DATA expConst<>+0x160(SB)/4, $0x3f800000
DATA expConst<>+0x164(SB)/4, $0x3f800000
DATA expConst<>+0x168(SB)/4, $0x3f800000
DATA expConst<>+0x16c(SB)/4, $0x3f800000
DATA expConst<>+0x170(SB)/4, $0x3f800000
DATA expConst<>+0x174(SB)/4, $0x3f800000
DATA expConst<>+0x178(SB)/4, $0x3f800000
DATA expConst<>+0x17c(SB)/4, $0x3f800000
DATA expConst<>+0x180(SB)/4, $0x0000007f
DATA expConst<>+0x184(SB)/4, $0x0000007f
DATA expConst<>+0x188(SB)/4, $0x0000007f
DATA expConst<>+0x18c(SB)/4, $0x0000007f
DATA expConst<>+0x190(SB)/4, $0x0000007f
DATA expConst<>+0x194(SB)/4, $0x0000007f
DATA expConst<>+0x198(SB)/4, $0x0000007f
DATA expConst<>+0x19c(SB)/4, $0x0000007f
GLOBL expConst<>(SB), RODATA|NOPTR, $416

// softMask: see vecMask in vec_amd64.s.
DATA softMask<>+0x00(SB)/8, $0xffffffffffffffff
DATA softMask<>+0x08(SB)/8, $0xffffffffffffffff
DATA softMask<>+0x10(SB)/8, $0xffffffffffffffff
DATA softMask<>+0x18(SB)/8, $0xffffffffffffffff
DATA softMask<>+0x20(SB)/8, $0
DATA softMask<>+0x28(SB)/8, $0
DATA softMask<>+0x30(SB)/8, $0
DATA softMask<>+0x38(SB)/8, $0
GLOBL softMask<>(SB), RODATA|NOPTR, $64

// negInf is eight float32 -Inf.
DATA negInf<>+0x00(SB)/8, $0xff800000ff800000
DATA negInf<>+0x08(SB)/8, $0xff800000ff800000
DATA negInf<>+0x10(SB)/8, $0xff800000ff800000
DATA negInf<>+0x18(SB)/8, $0xff800000ff800000
GLOBL negInf<>(SB), RODATA|NOPTR, $32

// EXP computes Y0 = x - m (x in Y0, m in Y15) added to the check sum Y14,
// then Y4 = exp(Y0), 0 where x - m < ln(FLT_MIN). Uses Y1-Y6.
#define EXP \
	VSUBPS      Y15, Y0, Y0;       \
	VADDPS      Y0, Y14, Y14;      \
	VMAXPS      EXP_LO, Y0, Y1;    \
	VCMPPS      $29, EXP_LO, Y0, Y2; \
	VMOVUPS     EXP_LOG2E, Y3;     \
	VFMADD213PS EXP_HALF, Y1, Y3;  \
	VROUNDPS    $1, Y3, Y3;        \
	VFNMADD231PS EXP_C1, Y3, Y1;   \
	VFNMADD231PS EXP_C2, Y3, Y1;   \
	VMOVUPS     EXP_P0, Y4;        \
	VFMADD213PS EXP_P1, Y1, Y4;    \
	VFMADD213PS EXP_P2, Y1, Y4;    \
	VFMADD213PS EXP_P3, Y1, Y4;    \
	VFMADD213PS EXP_P4, Y1, Y4;    \
	VFMADD213PS EXP_P5, Y1, Y4;    \
	VMULPS      Y1, Y1, Y5;        \
	VFMADD213PS Y1, Y5, Y4;        \
	VADDPS      EXP_ONE, Y4, Y4;   \
	VCVTTPS2DQ  Y3, Y6;            \
	VPADDD      EXP_BIAS, Y6, Y6;  \
	VPSLLD      $23, Y6, Y6;       \
	VMULPS      Y6, Y4, Y4;        \
	VANDPS      Y2, Y4, Y4

// func expSubSumAVX(x *float32, n int, m float32) (sum, check float32)
//
// Replaces x[i] by exp(x[i] - m) for i < n and returns their sum and
// check = the sum of x[i] - m, which is NaN when some x[i] or m is.
TEXT ·expSubSumAVX(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	MOVSS        m+16(FP), X15
	VBROADCASTSS X15, Y15
	VXORPS       Y14, Y14, Y14
	VXORPS       Y13, Y13, Y13

by8:
	CMPQ    CX, $8
	JLT     tail
	VMOVUPS (SI), Y0
	EXP
	VMOVUPS Y4, (SI)
	VADDPS  Y4, Y13, Y13
	ADDQ    $32, SI
	SUBQ    $8, CX
	JMP     by8

tail:
	TESTQ      CX, CX
	JZ         sum
	LEAQ       softMask<>+32(SB), AX
	MOVQ       CX, DX
	SHLQ       $2, DX
	SUBQ       DX, AX
	VMOVUPS    (AX), Y7
	VMASKMOVPS (SI), Y7, Y0
	VMOVUPS    Y14, Y8
	EXP
	VANDPS     Y7, Y4, Y4
	VADDPS     Y4, Y13, Y13
	VANDPS     Y7, Y0, Y0
	VADDPS     Y0, Y8, Y14

	// store the CX = 4a + 2b + c lanes of Y4 with plain stores
	CMPQ         CX, $4
	JLT          st2
	VMOVUPS      X4, (SI)
	VEXTRACTF128 $1, Y4, X4
	ADDQ         $16, SI
	SUBQ         $4, CX

st2:
	CMPQ    CX, $2
	JLT     st1
	VMOVSD  X4, (SI)
	VPSRLDQ $8, X4, X4
	ADDQ    $8, SI
	SUBQ    $2, CX

st1:
	TESTQ  CX, CX
	JZ     sum
	VMOVSS X4, (SI)

sum:
	VEXTRACTF128 $1, Y13, X1
	VADDPS       X1, X13, X13
	VHADDPS      X13, X13, X13
	VHADDPS      X13, X13, X13
	VEXTRACTF128 $1, Y14, X1
	VADDPS       X1, X14, X14
	VHADDPS      X14, X14, X14
	VHADDPS      X14, X14, X14
	VZEROUPPER
	MOVSS        X13, sum+24(FP)
	MOVSS        X14, check+28(FP)
	RET

// func maxAVX(x *float32, n int) float32
//
// Returns the largest x[i] for i < n (-Inf when n = 0).
TEXT ·maxAVX(SB), NOSPLIT, $0-20
	MOVQ    x+0(FP), SI
	MOVQ    n+8(FP), CX
	VMOVUPS negInf<>(SB), Y0
	VMOVUPS Y0, Y1

by16:
	CMPQ    CX, $16
	JLT     by8
	VMAXPS  (SI), Y0, Y0
	VMAXPS  32(SI), Y1, Y1
	ADDQ    $64, SI
	SUBQ    $16, CX
	JMP     by16

by8:
	CMPQ    CX, $8
	JLT     tail
	VMAXPS  (SI), Y0, Y0
	ADDQ    $32, SI
	SUBQ    $8, CX

tail:
	TESTQ      CX, CX
	JZ         reduce
	LEAQ       softMask<>+32(SB), AX
	SHLQ       $2, CX
	SUBQ       CX, AX
	VMOVUPS    (AX), Y7
	VMASKMOVPS (SI), Y7, Y2
	VMOVUPS    negInf<>(SB), Y3
	VBLENDVPS  Y7, Y2, Y3, Y2
	VMAXPS     Y2, Y1, Y1

reduce:
	VMAXPS       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS       X1, X0, X0
	VMOVHLPS     X0, X0, X1
	VMAXPS       X1, X0, X0
	VMOVSHDUP    X0, X1
	VMAXPS       X1, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+16(FP)
	RET

// func scaleAVX(alpha float32, x *float32, n int)
TEXT ·scaleAVX(SB), NOSPLIT, $0-24
	MOVSS        alpha+0(FP), X15
	VBROADCASTSS X15, Y15
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX

by32:
	CMPQ    CX, $32
	JLT     by8
	VMULPS  (SI), Y15, Y0
	VMULPS  32(SI), Y15, Y1
	VMULPS  64(SI), Y15, Y2
	VMULPS  96(SI), Y15, Y3
	VMOVUPS Y0, (SI)
	VMOVUPS Y1, 32(SI)
	VMOVUPS Y2, 64(SI)
	VMOVUPS Y3, 96(SI)
	ADDQ    $128, SI
	SUBQ    $32, CX
	JMP     by32

by8:
	CMPQ    CX, $8
	JLT     tail
	VMULPS  (SI), Y15, Y0
	VMOVUPS Y0, (SI)
	ADDQ    $32, SI
	SUBQ    $8, CX
	JMP     by8

tail:
	TESTQ      CX, CX
	JZ         done
	LEAQ       softMask<>+32(SB), AX
	MOVQ       CX, DX
	SHLQ       $2, DX
	SUBQ       DX, AX
	VMOVUPS    (AX), Y7
	VMASKMOVPS (SI), Y7, Y0
	VMULPS     Y0, Y15, Y0
	CMPQ       CX, $4
	JLT        st2
	VMOVUPS    X0, (SI)
	VEXTRACTF128 $1, Y0, X0
	ADDQ       $16, SI
	SUBQ       $4, CX

st2:
	CMPQ    CX, $2
	JLT     st1
	VMOVSD  X0, (SI)
	VPSRLDQ $8, X0, X0
	ADDQ    $8, SI
	SUBQ    $2, CX

st1:
	TESTQ  CX, CX
	JZ     done
	VMOVSS X0, (SI)

done:
	VZEROUPPER
	RET
