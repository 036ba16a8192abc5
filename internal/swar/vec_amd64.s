//go:build !purego

#include "textflag.h"

// Stop bytes, sixteen at a time with SSE2 (part of every amd64 CPU): a
// byte is a stop when it equals '"' or '\\', or when, read as a signed
// byte, it is below 0x20 (control characters, and every byte from 0x80 up,
// which reads as negative). PMOVMSKB packs the sixteen results into the
// low bits of a register, byte k giving bit k.

// SETUP fills X1, X2 and X3 with the quote, the backslash and 0x20.
#define SETUP \
	MOVQ $0x2222222222222222, DX \
	MOVQ DX, X1 \
	PUNPCKLQDQ X1, X1 \
	MOVQ $0x5c5c5c5c5c5c5c5c, DX \
	MOVQ DX, X2 \
	PUNPCKLQDQ X2, X2 \
	MOVQ $0x2020202020202020, DX \
	MOVQ DX, X3 \
	PUNPCKLQDQ X3, X3

// MASK16 sets R to the stop mask of the sixteen bytes at ADDR; it uses X4
// to X7.
#define MASK16(ADDR, R) \
	MOVOU ADDR, X4 \
	MOVO X4, X5 \
	PCMPEQB X1, X5 \
	MOVO X4, X6 \
	PCMPEQB X2, X6 \
	MOVO X3, X7 \
	PCMPGTB X4, X7 \
	POR X5, X6 \
	POR X6, X7 \
	PMOVMSKB X7, R

// func index16(b []byte) int
TEXT ·index16(SB), NOSPLIT, $0-32
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), CX
	ANDQ $~15, CX
	XORQ AX, AX
	SETUP
loop:
	CMPQ AX, CX
	JAE done
	MASK16((SI)(AX*1), DX)
	TESTL DX, DX
	JNZ found
	ADDQ $16, AX
	JMP loop
found:
	BSFL DX, DX
	ADDQ DX, AX
done:
	MOVQ AX, ret+24(FP)
	RET

// func mask64(b *[64]byte) uint64
TEXT ·mask64(SB), NOSPLIT, $0-16
	MOVQ b+0(FP), SI
	SETUP
	MASK16(0(SI), AX)
	MASK16(16(SI), BX)
	MASK16(32(SI), CX)
	MASK16(48(SI), DX)
	SHLQ $16, BX
	SHLQ $32, CX
	SHLQ $48, DX
	ORQ BX, AX
	ORQ CX, AX
	ORQ DX, AX
	MOVQ AX, ret+8(FP)
	RET
