// The routines a compiled function calls that isasim runs as built-ins (isasim/arm_sme/semantics/
// builtins.py), written again for the qemu oracle's object harness so that QEMU runs the same calls.
// object_main.c points each built-in's word at the routine of its number (the order of
// isasim_object_routines below is forms/builtins.py's).
//
// Each changes what isasim's built-in changes and nothing else: its results (x0; x1 for
// __arm_sme_state), memory, ZA, TPIDR2_EL0 and PSTATE.ZA as the SME ABI says, and no other register,
// not even NZCV, so the two final states can be compared register for register.  A routine that needs
// scratch registers keeps them in routine_spill, reached through TPIDR_EL0 (musl's thread pointer,
// which object_entry.S keeps aside while the function runs).  An abort (C's, or the SME ABI's for a bad
// TPIDR2 block) is BRK #0x3ab, which object_main.c reports as SIGABRT.

        .macro  spill_on                // x16 to TPIDR_EL0, then x9-x17 and NZCV to routine_spill
        msr     tpidr_el0, x16
        adrp    x16, routine_spill
        add     x16, x16, :lo12:routine_spill
        stp     x9, x10, [x16, #0]
        stp     x11, x12, [x16, #16]
        stp     x13, x14, [x16, #32]
        stp     x15, x17, [x16, #48]
        mrs     x9, nzcv
        str     x9, [x16, #64]
        mrs     x9, tpidr_el0
        str     x9, [x16, #72]
        .endm

        .macro  spill_off               // everything spill_on kept, back
        adrp    x16, routine_spill
        add     x16, x16, :lo12:routine_spill
        ldr     x9, [x16, #64]
        msr     nzcv, x9
        ldp     x9, x10, [x16, #0]
        ldp     x11, x12, [x16, #16]
        ldp     x13, x14, [x16, #32]
        ldp     x15, x17, [x16, #48]
        ldr     x16, [x16, #72]
        .endm

        // The TPIDR2 block at \blk: x10 = its za_save_buffer, x11 = num_za_save_slices; a nonzero reserved
        // field (bytes 10-15) aborts.
        .macro  tpidr2_block blk
        ldr     x11, [\blk, #8]
        lsr     x12, x11, #16
        cbnz    x12, routine_abort
        and     x11, x11, #0xffff
        ldr     x10, [\blk]
        .endm

        .text
        .p2align 2

isasim_memset:                          // void *memset(void *s, int c, size_t n)
        spill_on
        mov     x10, x0
        mov     x11, x2
1:      cbz     x11, 2f
        strb    w1, [x10], #1
        sub     x11, x11, #1
        b       1b
2:      spill_off
        ret

isasim_memmove:                         // memcpy and memmove: as if through a temporary
        spill_on
        mov     x10, x0                 // dest
        mov     x11, x1                 // src
        mov     x12, x2                 // n
        cmp     x10, x11
        b.ls    2f                      // dest at or below src: forwards
        add     x13, x11, x12
        cmp     x10, x13
        b.hs    2f                      // dest past src's end: forwards
        add     x10, x10, x12           // else backwards, from the end
        add     x11, x11, x12
1:      cbz     x12, 3f
        ldrb    w13, [x11, #-1]!
        strb    w13, [x10, #-1]!
        sub     x12, x12, #1
        b       1b
2:      cbz     x12, 3f
        ldrb    w13, [x11], #1
        strb    w13, [x10], #1
        sub     x12, x12, #1
        b       2b
3:      spill_off
        ret

isasim_abort:                           // void abort(void)
routine_abort:
        brk     #0x3ab

isasim_tpidr2_save:                     // commit a lazy save: ZA to the buffer TPIDR2_EL0's block names
        spill_on
        mrs     x9, tpidr2_el0
        cbz     x9, 2f
        tpidr2_block x9
        cbz     x11, 2f
        mov     w12, #0
1:      str     za[w12, 0], [x10]
        addsvl  x10, x10, #1
        add     w12, w12, #1
        cmp     w12, w11
        b.lo    1b
2:      spill_off
        ret

isasim_tpidr2_restore:                  // ZA back from the buffer of the block at x0
        spill_on
        mrs     x9, tpidr2_el0
        cbnz    x9, routine_abort       // the lazy save was not committed
        tpidr2_block x0
        cbz     x11, 2f
        mov     w12, #0
1:      ldr     za[w12, 0], [x10]
        addsvl  x10, x10, #1
        add     w12, w12, #1
        cmp     w12, w11
        b.lo    1b
2:      spill_off
        ret

isasim_za_disable:                      // commit any lazy save, TPIDR2_EL0 = 0, ZA off
        spill_on
        mrs     x9, tpidr2_el0
        cbz     x9, 2f
        tpidr2_block x9
        cbz     x11, 2f
        mov     w12, #0
1:      str     za[w12, 0], [x10]
        addsvl  x10, x10, #1
        add     w12, w12, #1
        cmp     w12, w11
        b.lo    1b
2:      msr     tpidr2_el0, xzr
        smstop  za
        spill_off
        ret

isasim_sme_state:                       // x0 = SME available : PSTATE.ZA : PSTATE.SM, x1 = TPIDR2_EL0
        mrs     x0, svcr
        and     x0, x0, #3
        orr     x0, x0, #0x8000000000000000
        mrs     x1, tpidr2_el0
        ret

isasim_get_current_vg:                  // x0 = the current VL in 64-bit granules (0: no SVE, not streaming)
        mrs     x0, svcr
        tbz     x0, #0, 1f
        rdsvl   x0, #1
        lsr     x0, x0, #3
        ret
1:      adrp    x0, isasim_object_has_sve
        ldr     x0, [x0, :lo12:isasim_object_has_sve]
        cbz     x0, 2f
        .inst   0x04bf5020              // rdvl x0, #1 (SVE: the harness is built without it)
        lsr     x0, x0, #3
2:      ret

isasim_sme_state_size:                  // x0 = 16 + (SVL/8)^2 + 64: the header, ZA, ZT0
        rdsvl   x0, #1
        mul     x0, x0, x0
        add     x0, x0, #80
        ret

isasim_sme_save:                        // the ZA state of the caller aside, in the block at x0
        spill_on
        mrs     x9, svcr
        tbz     x9, #1, 3f              // ZA off: nothing to keep
        mrs     x9, tpidr2_el0
        cbz     x9, 4f                  // ZA live: kept in the block
        tpidr2_block x9                 // dormant: commit the caller's lazy save
        cbz     x11, 2f
        mov     w12, #0
1:      str     za[w12, 0], [x10]
        addsvl  x10, x10, #1
        add     w12, w12, #1
        cmp     w12, w11
        b.lo    1b
2:      msr     tpidr2_el0, xzr
        smstop  za
3:      stp     xzr, xzr, [x0]
        b       9f
4:      mov     x9, #1
        stp     x9, xzr, [x0]
        add     x10, x0, #16
        rdsvl   x11, #1
        mov     w12, #0
5:      str     za[w12, 0], [x10]
        add     x10, x10, x11
        add     w12, w12, #1
        cmp     w12, w11
        b.lo    5b
        str     zt0, [x10]
        smstop  za
9:      spill_off
        ret

isasim_sme_restore:                     // the ZA state isasim_sme_save kept in the block at x0, back
        spill_on
        ldr     x9, [x0]
        cmp     x9, #1
        b.ne    9f
        smstart za
        add     x10, x0, #16
        rdsvl   x11, #1
        mov     w12, #0
5:      ldr     za[w12, 0], [x10]
        add     x10, x10, x11
        add     w12, w12, #1
        cmp     w12, w11
        b.lo    5b
        ldr     zt0, [x10]
9:      spill_off
        ret

        .section .rodata
        .p2align 3
        .globl  isasim_object_routines
isasim_object_routines:                 // by built-in number, as forms/builtins.py numbers them
        .quad   isasim_memset, isasim_memmove, isasim_memmove, isasim_abort
        .quad   isasim_tpidr2_save, isasim_tpidr2_restore, isasim_za_disable
        .quad   isasim_sme_state, isasim_get_current_vg
        .quad   isasim_sme_state_size, isasim_sme_save, isasim_sme_restore
        .globl  isasim_object_routine_count
isasim_object_routine_count:
        .quad   12
        .globl  isasim_object_abort
isasim_object_abort:
        .quad   routine_abort

        .bss
        .p2align 3
routine_spill:
        .skip   80
        .globl  isasim_object_has_sve
isasim_object_has_sve:
        .skip   8
