// isasim_run_case: load one architectural state, run one snippet in streaming mode with ZA on
// (or in the modes the state's SVCR asks for), and dump the state the snippet left.  Called from
// harness_main.c once per test case.
//
//   void isasim_run_case(const struct case_state *s);
//
// struct case_state holds pointers (see harness_main.c): x[32] (x0-x29, the snippet's address in
// slot 30, sp in slot 31; x0-x30 and sp out), nzcv, z[32][SVLB], p[16][SVLB/8], za[SVLB][SVLB],
// zt0[64], svcr.  The snippet runs with x0-x29, sp and NZCV from the state and x30 holding its
// return address (so a RET ends it, as falling off its end does).  Every general register and sp
// are the snippet's while it runs: the harness keeps its pointer, its sp and TPIDR_EL0 in memory
// (isasim_saved), and comes back through TPIDR_EL0, the one user register a snippet never names.
// Z, P, ZA and ZT0 move through memory with LDR/STR, which copy a register whole whatever
// its contents, so no predicate or element size is involved.

        .text
        .p2align 2
        .globl  isasim_run_case
        .type   isasim_run_case, %function
isasim_run_case:
        // AAPCS64: x19-x28, x29, x30 and d8-d15 survive a call.  SMSTART zeroes every Z register
        // (so d8-d15 too), hence they are saved here and restored after SMSTOP.
        stp     x29, x30, [sp, #-160]!
        mov     x29, sp
        stp     x19, x20, [sp, #16]
        stp     x21, x22, [sp, #32]
        stp     x23, x24, [sp, #48]
        stp     x25, x26, [sp, #64]
        stp     x27, x28, [sp, #80]
        stp     d8, d9, [sp, #96]
        stp     d10, d11, [sp, #112]
        stp     d12, d13, [sp, #128]
        stp     d14, d15, [sp, #144]
        mov     x19, x0                 // the state's pointers
        adrp    x9, isasim_saved
        add     x9, x9, :lo12:isasim_saved
        str     x19, [x9, #0]
        mov     x10, sp
        str     x10, [x9, #8]
        mrs     x10, tpidr_el0          // musl's thread pointer: back before any C runs again
        str     x10, [x9, #16]

        smstart                         // PSTATE.SM = PSTATE.ZA = 1 (zeroes Z, P, FFR and ZA)

        // ZA: SVLB horizontal vectors of SVLB bytes, ZA[0] first.
        ldr     x9, [x19, #32]
        rdsvl   x10, #1
        mov     w12, #0
1:      ldr     za[w12, 0], [x9]
        add     x9, x9, x10
        add     w12, w12, #1
        cmp     w12, w10
        b.lo    1b
        ldr     x9, [x19, #40]
        ldr     zt0, [x9]

        ldr     x9, [x19, #24]          // P registers, SVLB/8 bytes each, back to back
        .irp    n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
        ldr     p\n, [x9, #\n, mul vl]
        .endr
        ldr     x9, [x19, #16]          // Z registers, SVLB bytes each, back to back
        .irp    n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
        ldr     z\n, [x9, #\n, mul vl]
        .endr

        // The modes the snippet starts in: SVCR bit 0 (SM) and bit 1 (ZA).  Leaving either turns
        // it off as SMSTOP does (zeroing Z and P, or leaving ZA unreachable).
        ldr     x9, [x19, #48]
        ldr     x9, [x9]
        tbnz    x9, #0, 4f
        smstop  sm
4:      tbnz    x9, #1, 5f
        smstop  za
5:
        ldr     x9, [x19, #8]
        ldr     x9, [x9]
        msr     nzcv, x9
        ldr     x30, [x19]              // x0-x29, the snippet's address in slot 30, sp in slot 31
        ldr     x9, [x30, #248]
        mov     sp, x9
        ldp     x0, x1, [x30, #0]
        ldp     x2, x3, [x30, #16]
        ldp     x4, x5, [x30, #32]
        ldp     x6, x7, [x30, #48]
        ldp     x8, x9, [x30, #64]
        ldp     x10, x11, [x30, #80]
        ldp     x12, x13, [x30, #96]
        ldp     x14, x15, [x30, #112]
        ldp     x16, x17, [x30, #128]
        ldp     x18, x19, [x30, #144]
        ldp     x20, x21, [x30, #160]
        ldp     x22, x23, [x30, #176]
        ldp     x24, x25, [x30, #192]
        ldp     x26, x27, [x30, #208]
        ldp     x28, x29, [x30, #224]
        ldr     x30, [x30, #240]
        blr     x30                     // BLR reads its target before it writes the link

        // A snippet comes back here by RET, or by the branch after its last line.
        .globl  isasim_snippet_return
isasim_snippet_return:
        msr     tpidr_el0, x30          // frees x30 to find the state
        adrp    x30, isasim_saved
        ldr     x30, [x30, :lo12:isasim_saved]
        ldr     x30, [x30]
        stp     x0, x1, [x30, #0]
        stp     x2, x3, [x30, #16]
        stp     x4, x5, [x30, #32]
        stp     x6, x7, [x30, #48]
        stp     x8, x9, [x30, #64]
        stp     x10, x11, [x30, #80]
        stp     x12, x13, [x30, #96]
        stp     x14, x15, [x30, #112]
        stp     x16, x17, [x30, #128]
        stp     x18, x19, [x30, #144]
        stp     x20, x21, [x30, #160]
        stp     x22, x23, [x30, #176]
        stp     x24, x25, [x30, #192]
        stp     x26, x27, [x30, #208]
        stp     x28, x29, [x30, #224]
        mrs     x9, tpidr_el0
        str     x9, [x30, #240]
        mov     x9, sp
        str     x9, [x30, #248]
        adrp    x9, isasim_saved
        add     x9, x9, :lo12:isasim_saved
        ldr     x19, [x9, #0]
        ldr     x10, [x9, #8]
        mov     sp, x10
        ldr     x10, [x9, #16]
        msr     tpidr_el0, x10
        mrs     x9, nzcv
        ldr     x10, [x19, #8]
        str     x9, [x10]
        // SVCR as the snippet left it (bit 0 SM, bit 1 ZA).  If it turned either off, SMSTART
        // turns it back on so the dump below can run; what that zeroes is the architecture's
        // rule for the mode change, and the caller sees svcr to know.
        mrs     x9, svcr
        ldr     x10, [x19, #48]
        str     x9, [x10]
        cmp     x9, #3
        b.eq    2f
        smstart
2:
        ldr     x9, [x19, #16]
        .irp    n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
        str     z\n, [x9, #\n, mul vl]
        .endr
        ldr     x9, [x19, #24]
        .irp    n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
        str     p\n, [x9, #\n, mul vl]
        .endr
        ldr     x9, [x19, #40]
        str     zt0, [x9]
        ldr     x9, [x19, #32]
        rdsvl   x10, #1
        mov     w12, #0
3:      str     za[w12, 0], [x9]
        add     x9, x9, x10
        add     w12, w12, #1
        cmp     w12, w10
        b.lo    3b

        smstop
        ldp     d14, d15, [sp, #144]
        ldp     d12, d13, [sp, #128]
        ldp     d10, d11, [sp, #112]
        ldp     d8, d9, [sp, #96]
        ldp     x27, x28, [sp, #80]
        ldp     x25, x26, [sp, #64]
        ldp     x23, x24, [sp, #48]
        ldp     x21, x22, [sp, #32]
        ldp     x19, x20, [sp, #16]
        ldp     x29, x30, [sp], #160
        ret
        .size   isasim_run_case, . - isasim_run_case

        .bss
        .p2align 3
isasim_saved:                           // the state pointer, the harness's sp and TPIDR_EL0
        .skip   24

        .text
        .globl  isasim_svl_bytes
        .type   isasim_svl_bytes, %function
isasim_svl_bytes:                       // RDSVL reads the streaming vector length in any mode
        rdsvl   x0, #1
        ret
        .size   isasim_svl_bytes, . - isasim_svl_bytes
