/* An SME2 kernel using ZT0 and ZA, for tests/arm_sme/test_gdbserver.py: the same linked program is stepped in
 * gdb against QEMU's gdbstub and against isasim gdbserver, and the two must print the same registers.
 *
 * lut_dot: ZT0 = table (LDR ZT0); four vectors a = LUTI2 of the codes through ZT0; ZA.S VGx4 group 0 +=
 * a . b and a . a (UDOT, four bytes per lane); ZA1.S += the outer product of a's first vector and b's last
 * (UMOPA); out = the VGx4 group read back (MOVA) and stored; tile = ZA1.S, stored slice by slice in a loop.
 *
 * Built with -DWITH_START (static, -nostdlib -ffreestanding) it is a whole program: _start enters streaming
 * mode with ZA on (SMSTART), calls lut_dot with the addresses of the arrays of the header the test writes
 * (LUT_DATA, random bytes it knows), and exits.  The compare before the call leaves NZCV at Z and C, a value
 * the test gives isasim's entry too.  At -O1 lut_dot needs no stack, so neither run depends on where its
 * stack is.
 */
#include <arm_sme.h>
#include <stdint.h>

void lut_dot(const uint8_t *table, const uint8_t *codes, const uint8_t *b, uint32_t *out, uint32_t *tile)
    __arm_streaming __arm_inout("za", "zt0") {
    svldr_zt(0, table);
    svuint8_t c = svld1_u8(svptrue_b8(), codes);
    svuint8x4_t a = svluti2_lane_zt_u8_x4(0, c, 1);
    svuint8x4_t vb = svld1_u8_x4(svptrue_c8(), b);
    svzero_za();
    svdot_za32_u8_vg1x4(0, a, vb);
    svdot_za32_u8_vg1x4(0, a, a);
    svmopa_za32_u8_m(1, svptrue_b8(), svptrue_b8(), svget4_u8(a, 0), svget4_u8(vb, 3));
    svst1_u32_x4(svptrue_c32(), out, svread_za32_u32_vg1x4(0));
    for (uint64_t i = 0; i < svcntw(); i++)
        svst1_hor_za32(1, i, svptrue_b32(), tile + i * svcntw());
}

#ifdef WITH_START
#include LUT_DATA

__attribute__((naked, noreturn)) void _start(void) {
    __asm__ volatile(
        "cmp x0, x0\n"
        "smstart\n"
        "adrp x0, table\n add x0, x0, :lo12:table\n"
        "adrp x1, codes\n add x1, x1, :lo12:codes\n"
        "adrp x2, bvals\n add x2, x2, :lo12:bvals\n"
        "adrp x3, out\n add x3, x3, :lo12:out\n"
        "adrp x4, tile\n add x4, x4, :lo12:tile\n"
        "bl lut_dot\n"
        "smstop\n"
        "mov x0, #0\n mov x8, #93\n svc #0\n");
}
#endif
