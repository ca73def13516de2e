# The BF16 single block, K=32: C (16 x 16 fp32) = A (16 x 32 bf16) x B, with TDPBF16PS.
# B is packed two K values per column: packed[k/2][2n + k%2] = b[k][n].
.intel_syntax noprefix
    ldtilecfg [rcx]                     # tmm0 = C, tmm1 = A, tmm2 = packed B: 16 x 64 bytes
    mov r8, 64
    tilezero tmm0
    tileloadd tmm1, [rdi+r8*1]          # A: 16 x 32 bf16
    tileloadd tmm2, [rsi+r8*1]          # packed B
    tdpbf16ps tmm0, tmm1, tmm2          # C[m][n] += sum over k of A[m][k] * B[k][n], two fp32 lanes per element
    tilestored [rdx+r8*1], tmm0
    tilerelease
    ret
