# The seed article's 32x32 microkernel (bf16): M=64, N=32, K=128.
# Four accumulators tmm0-3 stay in tiles across the K loop; A (tmm4, tmm5) streams in with
# TILELOADDT1, B (tmm6, tmm7) with TILELOADD; A is packed [count][steps][2][16][64], B [steps][2][16][64].
.intel_syntax noprefix
    ldtilecfg [rcx]                     # all eight tiles 16 rows x 64 bytes
    mov r8, 64                          # row stride of the packed A and B blocks
    mov r9, 128                         # row stride of C: 32 int32 or fp32
    mov r10, 2                          # 32x32 output blocks to go
next_block:
    tilezero tmm0                       # C00 := 0
    tilezero tmm1                       # C01 := 0
    tilezero tmm2                       # C10 := 0
    tilezero tmm3                       # C11 := 0
    tileloaddt1 tmm4, [rdi+r8*1]        # A0 (rows 0-15) of K step 0
    tileloaddt1 tmm5, [rdi+r8*1+1024]   # A1 (rows 16-31)
    tileloadd tmm6, [rsi+r8*1]          # B0 (columns 0-15)
    tileloadd tmm7, [rsi+r8*1+1024]     # B1 (columns 16-31)
    mov rax, rsi                        # the B cursor
    mov r11, 3                          # K steps after the first
next_k:
    add rdi, 2048                       # A of the next K step
    add rax, 2048                       # B of the next K step
    tdpbf16ps tmm0, tmm4, tmm6          # C00 += A0 B0
    tdpbf16ps tmm1, tmm4, tmm7          # C01 += A0 B1
    tileloaddt1 tmm4, [rdi+r8*1]        # A0 is used up: load the next one
    tdpbf16ps tmm2, tmm5, tmm6          # C10 += A1 B0
    tileloadd tmm6, [rax+r8*1]          # B0 is used up: load the next one
    tdpbf16ps tmm3, tmm5, tmm7          # C11 += A1 B1
    tileloaddt1 tmm5, [rdi+r8*1+1024]
    tileloadd tmm7, [rax+r8*1+1024]
    dec r11
    jnz next_k
    tdpbf16ps tmm0, tmm4, tmm6          # the last K step
    tdpbf16ps tmm1, tmm4, tmm7
    tdpbf16ps tmm2, tmm5, tmm6
    tdpbf16ps tmm3, tmm5, tmm7
    tilestored [rdx+r9*1], tmm0         # C00
    tilestored [rdx+r9*1+64], tmm1      # C01
    tilestored [rdx+r9*1+2048], tmm2    # C10: 16 rows of 128 bytes further
    tilestored [rdx+r9*1+2112], tmm3    # C11
    add rdi, 2048                       # A of the next output block
    add rdx, 4096                       # C of the next output block: 32 x 32 x 4 bytes
    dec r10
    jnz next_block
    tilerelease
    ret
