"""The vector lines the tests assemble, and the vector instructions' bytes g++ emits with the text objdump prints
for them.  forms/test_vector.py holds them to GNU as and objdump; test_assembler_program.py and
explain/test_encoding_view.py use them too."""

CASES = [
    "pxor xmm0,xmm0", "pxor xmm15,xmm1", "pxor xmm3,XMMWORD PTR [rdi]", "pxor xmm8,XMMWORD PTR [rsp+0x10]",
    "vpxor xmm0,xmm0,xmm0", "vpxor xmm8,xmm9,xmm10", "vpxor xmm1,xmm2,xmm9", "vpxor ymm1,ymm2,ymm3",
    "vpxor ymm1,ymm2,YMMWORD PTR [rsp+0x20]", "vpxor xmm4,xmm5,XMMWORD PTR [r13+rax*8-0x10]",
    "movaps XMMWORD PTR [rbp-0x30],xmm0", "movaps XMMWORD PTR [rsp-0x38],xmm0", "movaps xmm3,XMMWORD PTR [rsp]",
    "movaps xmm1,xmm2", "movaps xmm12,xmm13",
    "movups XMMWORD PTR [rsp-0x18],xmm0", "movups XMMWORD PTR [rsp-0x47],xmm0", "movups xmm1,xmm2",
    "movups xmm9,XMMWORD PTR [r12+rax*4+0x7]",
    "movdqa xmm0,XMMWORD PTR [rsi+0x10]", "movdqa XMMWORD PTR [rsi],xmm14", "movdqa xmm1,xmm2",
    "vmovdqa XMMWORD PTR [rsp-0x30],xmm0", "vmovdqa ymm5,YMMWORD PTR [rdi+0x40]", "vmovdqa ymm5,ymm6",
    "vmovdqa xmm9,xmm1", "vmovdqa YMMWORD PTR [r8],ymm15",
    "vmovdqu8 YMMWORD PTR [rsp-0x3f],ymm0", "vmovdqu8 YMMWORD PTR [rsp-0x20],ymm0",
    "vmovdqu8 ZMMWORD PTR [rsp-0x50],zmm0", "vmovdqu8 ZMMWORD PTR [rsp-0x58],zmm0",
    "vmovdqu8 ZMMWORD PTR [rsp-0x40],zmm1", "vmovdqu8 zmm17,ZMMWORD PTR [rdi+0x80]", "vmovdqu8 xmm1,xmm2",
    "vmovdqu8 XMMWORD PTR [rdi],xmm20", "vmovdqu8 ymm31,ymm16", "vmovdqu8 zmm2,zmm3",
    "vpbroadcastw xmm0,eax", "vpbroadcastw zmm3,r9d", "vpbroadcastw ymm2,xmm1", "vpbroadcastw xmm2,WORD PTR [rdi]",
    "vpbroadcastw zmm2,xmm1", "vpbroadcastw xmm18,xmm1", "vpbroadcastw ymm4,WORD PTR [rsp+0x2]",
    "vzeroupper", "movdqa xmm0,XMMWORD PTR [rip+0x0]", "vmovdqu8 zmm1,ZMMWORD PTR [rip+0x40]",
]


GXX_BYTES = [  # from g++ -O0/-O2/-O3 [-march=sapphirerapids] -c of the kernels, with objdump's text
    ("c5 f9 ef c0", "vpxor xmm0,xmm0,xmm0"), ("66 0f ef c0", "pxor xmm0,xmm0"), ("c5 f8 77", "vzeroupper"),
    ("62 f1 7f 28 7f 84 24 c1 ff ff ff", "vmovdqu8 YMMWORD PTR [rsp-0x3f],ymm0"),
    ("62 f1 7f 28 7f 44 24 ff", "vmovdqu8 YMMWORD PTR [rsp-0x20],ymm0"),
    ("62 f1 7f 48 7f 84 24 b0 ff ff ff", "vmovdqu8 ZMMWORD PTR [rsp-0x50],zmm0"),
    ("0f 11 44 24 e8", "movups XMMWORD PTR [rsp-0x18],xmm0"), ("0f 29 45 d0", "movaps XMMWORD PTR [rbp-0x30],xmm0"),
    ("c5 f9 7f 44 24 d0", "vmovdqa XMMWORD PTR [rsp-0x30],xmm0"), ("62 f2 7d 08 7b c0", "vpbroadcastw xmm0,eax"),
    ("66 0f 6f 05 00 00 00 00", "movdqa xmm0,XMMWORD PTR [rip+0x0]"),
]
