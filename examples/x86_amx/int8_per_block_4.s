# The seed article's original kernel, called for 4 blocks:
# every call loads the configuration and B again and releases the tiles.
.intel_syntax noprefix
    mov r8, 64                          # row stride of A, B and C
    mov r10, 4                          # blocks to go
next_block:
    ldtilecfg [rcx]
    tilezero tmm0
    tileloadd tmm1, [rdi+r8*1]          # A
    tileloadd tmm2, [rsi+r8*1]          # packed B, again
    tdpbusd tmm0, tmm1, tmm2
    tilestored [rdx+r8*1], tmm0
    tilerelease
    add rdi, 1024
    add rdx, 1024
    dec r10
    jnz next_block
    ret
