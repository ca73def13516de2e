"""The semantics of the arm_sme forms: the execute functions, written as the Arm ARM's Operation (ASL) reads,
one module per instruction family.  Each function takes the context (context.py) and the form's operand
values; the form declarations (forms/) say which function a form runs.

    integer_dots            SME2 integer dot products into ZA vector groups (UDOT, SDOT, USDOT, SUDOT, ...VDOT)
    integer_outer_products  SME integer outer products into a ZA tile (UMOPA, SMOPA, ... and their MOPS)
    fp_products             the floating-point outer products and dots (FMOPA, BFMOPA, FDOT, BFDOT)
    za_moves                LDR/STR of a ZA vector, MOVA between tile slices or vector groups and Z registers
    vector_memory           the predicated loads and stores of ZA tile slices, Z and P registers
    predicates_and_counts   PTRUE, WHILELT/WHILELO, CNTB..., RDSVL, ADDVL, ADDSVL, ADDSPL
    modes                   SMSTART/SMSTOP and ZERO {mask}
    scalar                  the A64 scalar subset a kernel's loop needs
    za_tiles                ZA seen as tiles, slices and vector groups: the rows each names
"""
