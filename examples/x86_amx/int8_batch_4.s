# The seed article's batch kernel: 4 16x64 A blocks share one packed B.
# The configuration and B are loaded once; each block zeroes C, loads A, multiplies, stores.
.intel_syntax noprefix
    ldtilecfg [rcx]                     # tmm0 = C, tmm1 = A, tmm2 = packed B: 16 x 64 bytes
    mov r8, 64                          # row stride of A, B and C
    mov r10, 4                          # blocks to go
    tileloadd tmm2, [rsi+r8*1]          # B stays in tmm2 for every block
next_block:
    tilezero tmm0                       # C := 0
    tileloadd tmm1, [rdi+r8*1]          # this block's A
    tdpbusd tmm0, tmm1, tmm2
    tilestored [rdx+r8*1], tmm0         # this block's C
    add rdi, 1024                       # next A block: 16 x 64 bytes
    add rdx, 1024                       # next C block: 16 x 16 int32
    dec r10
    jnz next_block
    tilerelease
    ret
