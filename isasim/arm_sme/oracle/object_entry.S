// isasim_object_call: run a compiled function at the addresses isasim loaded it at, from a whole
// architectural state, and keep the state it returns with.  Called once by object_main.c.
//
//   void isasim_object_call(const struct object_state *s);
//
// struct object_state (object_main.c) holds pointers: x[32] (x0-x29; slot 30 the address of the entry
// stub, whose literal holds the function's own x30; slot 31 sp), nzcv, z[32][SVLB], p[16][SVLB/8],
// za[SVLB][SVLB], zt0[64], svcr, tpidr2.  The function's RET lands on the word after its code, which
// object_main.c made a branch to isasim_object_return.  While the function runs every general
// register and sp are its own: this file keeps its state pointer, its sp and TPIDR_EL0 (musl's thread
// pointer) in object_saved and finds them again through TPIDR_EL0.
//
// The way back keeps Z as the function left it whatever the mode: in streaming mode whole (STR Z), out of
// it the 128 bits the core has without SVE (STR Q); nothing here turns a mode on, so nothing is zeroed
// that the function did not zero.  ZA and ZT0 are stored where ZA is on; object_main.c clears what a mode
// that is off leaves unreadable (isasim's state reads as zero there).

        .text
        .p2align 2
        .globl  isasim_object_call
        .type   isasim_object_call, %function
isasim_object_call:
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
        mov     x19, x0
        adrp    x9, object_saved
        add     x9, x9, :lo12:object_saved
        str     x19, [x9, #0]
        mov     x10, sp
        str     x10, [x9, #8]
        mrs     x10, tpidr_el0
        str     x10, [x9, #16]

        ldr     x9, [x19, #56]          // TPIDR2_EL0 as the state gives it
        ldr     x9, [x9]
        msr     tpidr2_el0, x9

        smstart                         // both modes on, to load ZA, ZT0, P and Z whole
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
        ldr     x9, [x19, #24]
        .irp    n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
        ldr     p\n, [x9, #\n, mul vl]
        .endr
        ldr     x9, [x19, #16]
        .irp    n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
        ldr     z\n, [x9, #\n, mul vl]
        .endr
        ldr     x9, [x19, #48]          // the modes the function is entered in (SVCR bit 0 SM, bit 1 ZA)
        ldr     x9, [x9]
        tbnz    x9, #0, 2f
        smstop  sm
2:      tbnz    x9, #1, 3f
        smstop  za
3:      ldr     x9, [x19, #8]
        ldr     x9, [x9]
        msr     nzcv, x9
        ldr     x30, [x19]
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
        br      x30                     // the stub: x30 = the function's return address, then B to it

        .globl  isasim_object_return
isasim_object_return:
        msr     tpidr_el0, x30
        adrp    x30, object_saved
        ldr     x30, [x30, :lo12:object_saved]
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
        mrs     x11, nzcv
        adrp    x9, object_saved
        add     x9, x9, :lo12:object_saved
        ldr     x19, [x9, #0]
        ldr     x10, [x9, #8]
        mov     sp, x10
        ldr     x10, [x9, #16]
        msr     tpidr_el0, x10
        ldr     x10, [x19, #8]
        str     x11, [x10]
        mrs     x9, tpidr2_el0
        ldr     x10, [x19, #56]
        str     x9, [x10]
        mrs     x20, svcr
        ldr     x10, [x19, #48]
        str     x20, [x10]
        rdsvl   x11, #1
        tbz     x20, #0, 4f
        ldr     x9, [x19, #16]          // streaming: Z and P whole
        .irp    n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
        str     z\n, [x9, #\n, mul vl]
        .endr
        ldr     x9, [x19, #24]
        .irp    n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
        str     p\n, [x9, #\n, mul vl]
        .endr
        b       5f
4:      ldr     x9, [x19, #16]          // not streaming: the low 128 bits of each Z, SVLB bytes apart
        .irp    n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
        str     q\n, [x9]
        add     x9, x9, x11
        .endr
5:      tbz     x20, #1, 7f
        ldr     x9, [x19, #40]
        str     zt0, [x9]
        ldr     x9, [x19, #32]
        mov     w12, #0
6:      str     za[w12, 0], [x9]
        add     x9, x9, x11
        add     w12, w12, #1
        cmp     w12, w11
        b.lo    6b
7:      smstop
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
        .size   isasim_object_call, . - isasim_object_call

        .globl  isasim_object_svl_bytes
        .type   isasim_object_svl_bytes, %function
isasim_object_svl_bytes:
        rdsvl   x0, #1
        ret
        .size   isasim_object_svl_bytes, . - isasim_object_svl_bytes

        .bss
        .p2align 3
object_saved:                           // the state pointer, the harness's sp and TPIDR_EL0
        .skip   24
