"""The exact numerics the arm_sme semantics call, bit for bit as the Arm ARM's pseudocode defines them.

    fp_asl      the floating-point functions (FPRound, FPMulAdd, FPDotAdd_ZA, BFDotAdd ...), one element at a
                time, in the Arm ARM's names: the definition explain prints and the tests derive examples from
    fp_arrays   the same rules over whole numpy arrays: what the FP instructions execute
    integer_asl the integer and bit functions (Ones, SInt, ROR, AddWithCarry, DecodeBitMasks, ConditionHolds ...)
                the A64 semantics and the immediate encodings share
"""
