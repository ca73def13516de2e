# int8 GEMM on the 910B: C (30 x 40, int32) = A (30 x 70) . B (70 x 40)
# GM -> L1: ND to Nz fractals (16 rows x 32 int8), A and B^T
DataCopy(dst=L1[0], src=GM[0x100000], dtype=int8, nValue=30, dValue=70, srcDValue=70, dstNzC0Stride=32)
DataCopy(dst=L1[3072], src=GM[0x200000], dtype=int8, nValue=40, dValue=70, srcDValue=70, dstNzC0Stride=48)
# MTE1 reads what MTE2 wrote: the pipes run in parallel, so MTE1 waits for MTE2's flag
SetFlag(event=MTE2_MTE1, id=0)
WaitFlag(event=MTE2_MTE1, id=0)
# L1 -> L0A as Zz: row block r takes fractals r, r + 2, r + 4 of L1's Nz
LoadData(dst=L0A[0], src=L1[0], dtype=int8, startIndex=0, repeatTimes=3, srcStride=2)
LoadData(dst=L0A[1536], src=L1[0], dtype=int8, startIndex=1, repeatTimes=3, srcStride=2)
# L1 -> L0B: B^T's Nz is B's Zn already
LoadData(dst=L0B[0], src=L1[3072], dtype=int8, repeatTimes=9)
SetFlag(event=MTE1_M, id=0)
WaitFlag(event=MTE1_M, id=0)
Mmad(c=L0C[0], a=L0A[0], b=L0B[0], aType=int8, bType=int8, m=30, n=40, k=70)
SetFlag(event=M_FIX, id=0)
WaitFlag(event=M_FIX, id=0)
# L0C (Nz, 32 rows per column block) -> GM as the 30 x 40 ND matrix
Fixpipe(dst=GM[0x300000], src=L0C[0], srcType=int32, dstType=int32, nSize=40, mSize=30, srcStride=32, dstStride=40)
