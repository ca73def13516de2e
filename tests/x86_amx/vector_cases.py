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
    # issue 27: the moves of every width and mask form, GPR <-> xmm, the zeroing and all-ones idioms,
    # broadcasts, and the opmask instructions
    # moves of every width, aligned and not, with and without masks, loads and stores
    "movdqu xmm1,xmm2", "movdqu xmm9,XMMWORD PTR [rdi+0x3]", "movdqu XMMWORD PTR [rsp-0x18],xmm0",
    "vmovdqu xmm1,xmm2", "vmovdqu ymm9,YMMWORD PTR [rdi+0x3]", "vmovdqu YMMWORD PTR [rsp-0x28],ymm0",
    "vmovdqu xmm0,xmm8",
    "vmovdqa32 zmm1,ZMMWORD PTR [rdi]", "vmovdqa32 ymm17{k1}{z},YMMWORD PTR [rdi+0x20]",
    "vmovdqa32 XMMWORD PTR [rsp+0x10]{k7},xmm3", "vmovdqa32 zmm2{k2},zmm3",
    "vmovdqa64 ZMMWORD PTR [rsp+0x40],zmm0", "vmovdqa64 zmm0,ZMMWORD PTR [rsp+0x40]", "vmovdqa64 xmm1{k1}{z},xmm2",
    "vmovdqa64 ymm31,ymm16", "vmovdqa64 zmm5,ZMMWORD PTR [rip+0x40]",
    "vmovdqu16 zmm1{k1}{z},ZMMWORD PTR [rdi+0x2]", "vmovdqu16 YMMWORD PTR [rdi]{k3},ymm4", "vmovdqu16 xmm1,xmm2",
    "vmovdqu32 zmm1,ZMMWORD PTR [rdi+0x4]", "vmovdqu32 ZMMWORD PTR [rdi+0x4]{k1},zmm1", "vmovdqu32 ymm1{k1},ymm2",
    "vmovdqu32 xmm20,XMMWORD PTR [r12+rax*4+0x7]",
    "vmovdqu64 zmm1,ZMMWORD PTR [rdi+0x8]", "vmovdqu64 ZMMWORD PTR [rsp-0x40],zmm31", "vmovdqu64 ymm1{k5}{z},ymm2",
    "vmovdqu8 zmm1{k1}{z},ZMMWORD PTR [rdi+0x1]", "vmovdqu8 XMMWORD PTR [rdi]{k1},xmm2",
    "vmovups xmm1,xmm2", "vmovups ymm1,YMMWORD PTR [rdi+0x4]", "vmovups YMMWORD PTR [rdi],ymm15",
    "vmovups zmm1{k1}{z},ZMMWORD PTR [rdi+0x4]", "vmovups ZMMWORD PTR [rdi]{k1},zmm1", "vmovups xmm16,xmm1",
    "vmovaps xmm0,xmm8", "vmovaps ymm1,YMMWORD PTR [rdi]", "vmovaps ZMMWORD PTR [rsp],zmm0", "vmovaps zmm1{k1},zmm2",
    "vmovupd xmm1,XMMWORD PTR [rdi+0x8]", "vmovupd ZMMWORD PTR [rdi+0x8]{k1},zmm1", "vmovupd ymm3,ymm4",
    "vmovapd xmm1,XMMWORD PTR [rdi]", "vmovapd zmm1{k1}{z},zmm2", "vmovapd YMMWORD PTR [rdi],ymm1",
    # GPR <-> xmm
    "movd xmm1,eax", "movd eax,xmm1", "movd xmm9,DWORD PTR [rdi+0x4]", "movd DWORD PTR [rdi],xmm10", "movd r9d,xmm3",
    "movq xmm1,rax", "movq rax,xmm1", "movq xmm1,xmm2", "movq xmm1,QWORD PTR [rdi]", "movq QWORD PTR [rdi],xmm1",
    "movq r15,xmm15",
    "vmovd xmm1,eax", "vmovd eax,xmm1", "vmovd xmm1,DWORD PTR [rdi]", "vmovd DWORD PTR [rdi],xmm1", "vmovd xmm17,ecx",
    "vmovq xmm1,rax", "vmovq rax,xmm1", "vmovq xmm1,xmm2", "vmovq xmm1,QWORD PTR [rdi]", "vmovq QWORD PTR [rdi],xmm1",
    "vmovq rax,xmm17", "vmovq xmm16,xmm1",
    # zeroing and all-ones idioms, logic
    "vpxord zmm0,zmm0,zmm0", "vpxord xmm16,xmm16,xmm16", "vpxord ymm1{k1}{z},ymm2,YMMWORD PTR [rdi]",
    "vpxorq zmm1,zmm2,zmm3", "vpxorq zmm1{k1},zmm2,ZMMWORD PTR [rdi+0x40]", "vpxorq xmm1,xmm2,xmm3",
    "vpternlogd zmm0,zmm0,zmm0,0xff", "vpternlogd ymm1{k1}{z},ymm2,ymm3,0x96", "vpternlogd xmm1,xmm2,XMMWORD PTR [rdi],0x0",
    "vpternlogq zmm1,zmm2,zmm3,0xca", "vpternlogq zmm1{k1},zmm2,ZMMWORD PTR [rdi],0x1",
    # broadcasts
    "vpbroadcastb xmm1,xmm2", "vpbroadcastb ymm1,BYTE PTR [rdi]", "vpbroadcastb zmm1,eax", "vpbroadcastb zmm1{k1}{z},xmm2",
    "vpbroadcastd xmm1,xmm2", "vpbroadcastd ymm1,DWORD PTR [rdi]", "vpbroadcastd zmm1,eax", "vpbroadcastd zmm1{k1},DWORD PTR [rdi]",
    "vpbroadcastd xmm17,r8d",
    "vpbroadcastq xmm1,xmm2", "vpbroadcastq ymm1,QWORD PTR [rdi]", "vpbroadcastq zmm1,rax", "vpbroadcastq zmm2{k2}{z},xmm3",
    "vpbroadcastw zmm1{k1}{z},eax",
    "vbroadcastss xmm1,DWORD PTR [rdi]", "vbroadcastss ymm1,xmm2", "vbroadcastss zmm1,DWORD PTR [rdi]",
    "vbroadcastss zmm1{k1}{z},xmm2", "vbroadcastss xmm1,xmm2",
    # opmask registers
    "kmovb k1,eax", "kmovb eax,k1", "kmovb k1,k2", "kmovb k1,BYTE PTR [rdi]", "kmovb BYTE PTR [rdi],k1",
    "kmovw k1,eax", "kmovw eax,k1", "kmovw k7,k0", "kmovw k1,WORD PTR [rdi]", "kmovw WORD PTR [rsp+0x2],k1",
    "kmovd k1,eax", "kmovd r10d,k1", "kmovd k1,k2", "kmovd k1,DWORD PTR [rdi]", "kmovd DWORD PTR [rdi],k1",
    "kmovq k1,rax", "kmovq rax,k1", "kmovq k1,k2", "kmovq k1,QWORD PTR [rdi]", "kmovq QWORD PTR [rdi],k1",
    "kortestb k1,k2", "kortestw k0,k0", "kortestd k1,k1", "kortestq k6,k7",
    "kxorb k1,k1,k1", "kxorw k0,k0,k0", "kxord k1,k2,k3", "kxorq k7,k6,k5",
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
