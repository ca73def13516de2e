# The seed article's single 16x16 block, K=64: C = A x B with TDPBUSD.
# A: 16 x 64 uint8 at rdi; B packed four K values per column (16 x 64 int8) at rsi;
# C: 16 x 16 int32 at rdx; the tile configuration at rcx.
.intel_syntax noprefix
amx_block:
    ldtilecfg [rcx]                     # tmm0 = C, tmm1 = A, tmm2 = packed B: 16 rows x 64 bytes each
    mov r8, 64                          # the row stride of A, packed B and C, in bytes
    tilezero tmm0                       # C := 0
    tileloadd tmm1, [rdi+r8*1]          # A
    tileloadd tmm2, [rsi+r8*1]          # packed B
    tdpbusd tmm0, tmm1, tmm2            # C[m][n] += sum over k of uint8 A[m][k] * int8 B[k][n]
    tilestored [rdx+r8*1], tmm0         # write C back
    tilerelease                         # return the tiles to their INIT state
    ret
