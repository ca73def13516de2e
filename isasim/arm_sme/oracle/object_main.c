/* The qemu oracle's harness for a compiled function (isasim run FILE.o --function NAME): the code isasim
 * loaded, with its relocations applied, runs under QEMU at the very addresses isasim placed it, with
 * every memory region of the run (the data sections, the stack, the init's regions) at its own address,
 * so the two final states compare byte for byte.  Each built-in's word becomes a branch to the routine
 * of its number (object_routines.S); the word after the code, where the function's RET lands (isasim
 * sets x30 to it), a branch back to the harness (object_entry.S).
 *
 * Stream (little-endian; SVLB = streaming vector length in bytes):
 *   in:   u32 magic 'ISOB', u32 SVLB, u32 has_sve,
 *         u64 code base, u64 code end, u64 x30 (the function's return address), u64 TPIDR2_EL0,
 *         u32 built-ins, u32 regions, u32 maps, u32 read-only spans,
 *         built-ins x (u64 address, u64 routine number), maps and read-only spans x (u64 start, u64 size),
 *         regions x (u64 address, u64 size),
 *         u64 x[32] (x0-x29, slot 30 unused, sp), u64 nzcv, u64 svcr (the modes to start in),
 *         z[32][SVLB], p[16][SVLB/8], za[SVLB][SVLB], zt0[64],
 *         the code's bytes, then the regions' bytes
 *   out:  u32 status, u32 signal number, then
 *         status 0 (returned): u64 svcr, x[32] (x0-x30, sp), u64 nzcv, z, p, za, zt0 as in (what a mode that
 *                              is off makes unreadable reads as zero), the regions' bytes, u64 TPIDR2_EL0
 *         status 1 (fault):    u64 fault address, i64 index of the instruction in the code (-1 outside
 *                              it: in a routine), u64 pc.  An abort (BRK #0x3ab) is reported as SIGABRT.
 *                              Then the state the fault saw, as the kernel's signal frame holds it: u64 svcr,
 *                              x[32], nzcv, z, p, za, zt0, the regions' bytes and TPIDR2_EL0 as for status 0
 *                              (a part the frame does not hold reads as zero).
 *         status 2 (a step, in the lockstep mode: bit 1 of has_sve's word): u64 index of the instruction about to
 *                              run, then the state before it as for status 1 but the memory as the pages that
 *                              changed since the last record: (u32 region, u32 offset, u32 size, bytes) each,
 *                              ended by u32 0xffffffff; then the next record.  Every word of the code is a BRK
 *                              there: the handler writes the record, then runs the word out of line (a copy of it
 *                              followed by a branch back) or, for the words that read the pc (B, BL, B.cond, CBZ,
 *                              TBZ, ADR, ADRP, BLR, LDR literal), does what it does itself.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

struct object_state {        /* the order object_entry.S reads: keep the two in step */
    uint64_t *x;
    uint64_t *nzcv;
    uint8_t *z;
    uint8_t *p;
    uint8_t *za;
    uint8_t *zt0;
    uint64_t *svcr;
    uint64_t *tpidr2;
};

void isasim_object_call(const struct object_state *s);
void isasim_object_return(void);
uint64_t isasim_object_svl_bytes(void);
extern const uint64_t isasim_object_routines[];
extern const uint64_t isasim_object_routine_count;
extern const uint64_t isasim_object_abort;
extern uint64_t isasim_object_has_sve;

enum { MAGIC = 0x424f5349u /* "ISOB" */, NX = 32, ZT0_BYTES = 64, PAGE = 4096, STUB_BYTES = 16 };

static uint64_t code_base, code_end;
static size_t svl_bytes, region_count;
static uint64_t *region_table;
static uint8_t *fault_z, *fault_p, *fault_za;
static int tracing;                 /* the lockstep mode: a record before every instruction */
static uint32_t *original;          /* the code's words, as they were before the BRKs */
static uint64_t step_slots;         /* each word's out-of-line copy: 8 bytes, the word and a B back */
static uint8_t **shadow;            /* each region as the last record left it */
enum { STEP_BRK = 0xd4207580u /* brk #0x3ac */, SLOT_BASE = 0x6000000 };

/* The records of an arm64 signal frame (Linux's sigcontext.h, as QEMU writes them) this harness reads. */
enum { FPSIMD = 0x46508001, EXTRA = 0x45585401, SVE = 0x53564501, ZA = 0x54366345, ZT = 0x5a544e01,
       TPIDR2 = 0x54504902, SVE_FLAG_SM = 1 };

struct record { uint32_t magic, size; };

/* The interrupted state's SVE, SME and TPIDR2 parts from the frame's records: svcr, Z, P, ZA, ZT0 and TPIDR2. */
static void frame_state(ucontext_t *uc, uint64_t *svcr, uint8_t *zt0, uint64_t *tpidr2) {
    uint8_t *at = (uint8_t *)uc->uc_mcontext.__reserved;
    uint8_t *end = at + sizeof uc->uc_mcontext.__reserved;
    *svcr = 0;
    while (at + sizeof(struct record) <= end) {
        struct record head;
        memcpy(&head, at, sizeof head);
        if (head.magic == 0 || head.size < sizeof head) break;
        if (head.magic == FPSIMD) {  /* the V registers: Z's low 128 bits */
            for (int n = 0; n < 32; n++) memcpy(fault_z + n * svl_bytes, at + 16 + 16 * n, 16);
        } else if (head.magic == SVE && head.size > 16) {
            uint16_t vl, flags;
            memcpy(&vl, at + 8, 2);
            memcpy(&flags, at + 10, 2);
            if (flags & SVE_FLAG_SM) *svcr |= 1;
            if (vl == svl_bytes) {
                memcpy(fault_z, at + 16, 32 * svl_bytes);
                memcpy(fault_p, at + 16 + 32 * svl_bytes, 16 * svl_bytes / 8);
            }
        } else if (head.magic == SVE) {
            uint16_t flags;
            memcpy(&flags, at + 10, 2);
            if (flags & SVE_FLAG_SM) *svcr |= 1;
        } else if (head.magic == ZA && head.size > 16) {
            *svcr |= 2;
            memcpy(fault_za, at + 16, svl_bytes * svl_bytes);
        } else if (head.magic == ZT && head.size >= 16 + ZT0_BYTES) {
            memcpy(zt0, at + 16, ZT0_BYTES);
        } else if (head.magic == TPIDR2) {
            memcpy(tpidr2, at + 8, 8);
        } else if (head.magic == EXTRA) {  /* the rest of the records, where a large frame put them */
            uint64_t data;
            uint32_t size;
            memcpy(&data, at + 8, 8);
            memcpy(&size, at + 16, 4);
            at = (uint8_t *)(uintptr_t)data;
            end = at + size;
            continue;
        }
        at += head.size;
    }
}

static void read_exactly(void *buf, size_t n) {
    if (n && fread(buf, 1, n, stdin) != n) {
        fprintf(stderr, "object harness: input ended early\n");
        exit(2);
    }
}

static void write_all(const void *buf, size_t n) {
    if (n && fwrite(buf, 1, n, stdout) != n) exit(2);
}

static int64_t index_of(uint64_t pc) {
    if (pc >= code_base && pc < code_end) return (int64_t)((pc - code_base) / 4);
    if (tracing && pc >= step_slots && pc < step_slots + 2 * (code_end - code_base))
        return (int64_t)((pc - step_slots) / 8);
    return -1;
}

static void write_state(ucontext_t *uc, int whole_regions);
static void step(ucontext_t *uc, int64_t index);

static void on_fault(int sig, siginfo_t *info, void *context) {
    ucontext_t *uc = context;
    uint64_t pc = uc->uc_mcontext.pc;
    int64_t index = index_of(pc);
    if (tracing && sig == SIGTRAP && pc >= code_base && pc < code_end) {
        step(uc, index);
        return;
    }
    if (sig == SIGTRAP && pc == isasim_object_abort) sig = SIGABRT;
    uint32_t head[2] = {1, (uint32_t)sig};
    uint64_t fault[3] = {(uint64_t)info->si_addr, (uint64_t)index, pc};
    unsigned char record[sizeof head + sizeof fault];
    memcpy(record, head, sizeof head);
    memcpy(record + sizeof head, fault, sizeof fault);
    ssize_t unused = write(1, record, sizeof record);
    (void)unused;
    write_state(uc, 1);
    _exit(0);
}

/* The state the frame holds: general registers from it, the rest from its records; the regions whole, or as the
 * pages that changed since the last record. */
static void write_state(ucontext_t *uc, int whole_regions) {
    ssize_t unused;
    uint64_t x[NX], nzcv = uc->uc_mcontext.pstate & 0xf0000000u, svcr = 0, tpidr2 = 0;
    uint8_t zt0[ZT0_BYTES] = {0};
    memcpy(x, uc->uc_mcontext.regs, 31 * 8);
    x[31] = uc->uc_mcontext.sp;
    memset(fault_z, 0, 32 * svl_bytes);
    memset(fault_p, 0, 16 * svl_bytes / 8);
    memset(fault_za, 0, svl_bytes * svl_bytes);
    frame_state(uc, &svcr, zt0, &tpidr2);
    if (!(svcr & 1))
        for (int n = 0; n < 32; n++) memset(fault_z + n * svl_bytes + 16, 0, svl_bytes - 16);
    unused = write(1, &svcr, 8);
    unused = write(1, x, sizeof x);
    unused = write(1, &nzcv, 8);
    unused = write(1, fault_z, 32 * svl_bytes);
    unused = write(1, fault_p, 16 * svl_bytes / 8);
    unused = write(1, fault_za, svl_bytes * svl_bytes);
    unused = write(1, zt0, ZT0_BYTES);
    unused = write(1, &tpidr2, 8);
    if (whole_regions) {
        for (size_t r = 0; r < region_count; r++)
            unused = write(1, (void *)(uintptr_t)region_table[2 * r], region_table[2 * r + 1]);
    } else {
        for (size_t r = 0; r < region_count; r++) {
            uint8_t *live = (uint8_t *)(uintptr_t)region_table[2 * r];
            uint64_t size = region_table[2 * r + 1];
            for (uint64_t at = 0; at < size; at += PAGE) {
                uint32_t part[3] = {(uint32_t)r, (uint32_t)at, (uint32_t)(size - at < PAGE ? size - at : PAGE)};
                if (!memcmp(shadow[r] + at, live + at, part[2])) continue;
                memcpy(shadow[r] + at, live + at, part[2]);
                unused = write(1, part, sizeof part);
                unused = write(1, live + at, part[2]);
            }
        }
        uint32_t end = 0xffffffffu;
        unused = write(1, &end, 4);
    }
    (void)unused;
}

static int64_t sext(uint64_t value, int bits) {
    return (int64_t)(value << (64 - bits)) >> (64 - bits);
}

static int condition_holds(uint64_t pstate, uint32_t cond) {
    int n = pstate >> 31 & 1, z = pstate >> 30 & 1, c = pstate >> 29 & 1, v = pstate >> 28 & 1, result;
    switch (cond >> 1) {
    case 0: result = z; break;
    case 1: result = c; break;
    case 2: result = n; break;
    case 3: result = v; break;
    case 4: result = c && !z; break;
    case 5: result = n == v; break;
    case 6: result = n == v && !z; break;
    default: result = 1;
    }
    return (cond & 1) && cond != 15 ? !result : result;
}

/* QEMU (11.1) refuses to return from a signal taken out of streaming mode on a core with SME and without SVE
 * (sve=off) while the frame holds the SVE record it wrote itself: sigreturn is a SIGSEGV.  Out of streaming mode
 * that core has no SVE state beyond the V registers, which the FPSIMD record holds, so the handler takes the SVE
 * record out of the frame (the records after it move up) and the return goes through. */
static void drop_non_streaming_sve(ucontext_t *uc) {
    uint8_t *at = (uint8_t *)uc->uc_mcontext.__reserved, *end = at + sizeof uc->uc_mcontext.__reserved;
    while (at + sizeof(struct record) <= end) {
        struct record head;
        memcpy(&head, at, sizeof head);
        if (head.magic == 0 || head.size < sizeof head || at + head.size > end) return;
        if (head.magic == SVE) {
            uint16_t flags;
            memcpy(&flags, at + 10, 2);
            if (flags & SVE_FLAG_SM) return;
            uint8_t *rest = at + head.size, *last = rest;
            while (last + sizeof(struct record) <= end) {  /* the records after it, and the terminator */
                struct record next;
                memcpy(&next, last, sizeof next);
                last += next.magic == 0 ? sizeof next : next.size;
                if (next.magic == 0 || next.size < sizeof next) break;
            }
            memmove(at, rest, (size_t)(last - rest));
            return;
        }
        at += head.size;
    }
}

/* One step of the lockstep mode: the record, then the word at the BRK, run. */
static void step(ucontext_t *uc, int64_t index) {
    uint32_t head[2] = {2, 0};
    uint64_t at = (uint64_t)index;
    ssize_t unused = write(1, head, sizeof head);
    unused = write(1, &at, 8);
    (void)unused;
    write_state(uc, 0);
    uint64_t pc = uc->uc_mcontext.pc, *x = (uint64_t *)uc->uc_mcontext.regs;
    uint32_t w = original[index], rt = w & 31;
    uint64_t value = rt == 31 ? 0 : x[rt];
    if ((w & 0x7c000000u) == 0x14000000u) {                         /* B, BL */
        if (w >> 31) x[30] = pc + 4;
        uc->uc_mcontext.pc = pc + 4 * sext(w, 26);
    } else if ((w & 0xff000010u) == 0x54000000u) {                  /* B.cond */
        uc->uc_mcontext.pc = condition_holds(uc->uc_mcontext.pstate, w & 15) ? pc + 4 * sext(w >> 5, 19) : pc + 4;
    } else if ((w & 0x7e000000u) == 0x34000000u) {                  /* CBZ, CBNZ */
        if (!(w >> 31)) value &= 0xffffffffu;
        int taken = (w >> 24 & 1) ? value != 0 : value == 0;
        uc->uc_mcontext.pc = taken ? pc + 4 * sext(w >> 5, 19) : pc + 4;
    } else if ((w & 0x7e000000u) == 0x36000000u) {                  /* TBZ, TBNZ */
        uint32_t bit = (w >> 31) << 5 | (w >> 19 & 31);
        int taken = (int)(value >> bit & 1) == (int)(w >> 24 & 1);
        uc->uc_mcontext.pc = taken ? pc + 4 * sext(w >> 5, 14) : pc + 4;
    } else if ((w & 0x1f000000u) == 0x10000000u) {                  /* ADR, ADRP */
        int64_t imm = sext((uint64_t)(w >> 5 & 0x7ffff) << 2 | (w >> 29 & 3), 21);
        uint64_t result = (w >> 31) ? (pc & ~0xfffull) + (uint64_t)(imm << 12) : pc + (uint64_t)imm;
        if (rt != 31) x[rt] = result;
        uc->uc_mcontext.pc = pc + 4;
    } else if ((w & 0xfffffc1fu) == 0xd63f0000u) {                  /* BLR */
        uint64_t target = (w >> 5 & 31) == 31 ? 0 : x[w >> 5 & 31];
        x[30] = pc + 4;
        uc->uc_mcontext.pc = target;
    } else if ((w & 0x3b000000u) == 0x18000000u && !(w >> 26 & 1)) {  /* LDR (literal), LDRSW, PRFM */
        uint64_t address = pc + 4 * sext(w >> 5, 19);
        uint32_t opc = w >> 30;
        if (opc == 0) { uint32_t v; memcpy(&v, (void *)(uintptr_t)address, 4); if (rt != 31) x[rt] = v; }
        else if (opc == 1) { uint64_t v; memcpy(&v, (void *)(uintptr_t)address, 8); if (rt != 31) x[rt] = v; }
        else if (opc == 2) { int32_t v; memcpy(&v, (void *)(uintptr_t)address, 4); if (rt != 31) x[rt] = (uint64_t)(int64_t)v; }
        uc->uc_mcontext.pc = pc + 4;
    } else {                                                        /* anything else: its copy, then back */
        uc->uc_mcontext.pc = step_slots + 8 * (uint64_t)index;
    }
    if (!isasim_object_has_sve) drop_non_streaming_sve(uc);
}

/* B from `at` to `target` (both words), or 0 where it cannot reach */
static uint32_t branch(uint64_t at, uint64_t target) {
    int64_t delta = (int64_t)(target - at);
    if (delta < -(1LL << 27) || delta >= (1LL << 27)) return 0;
    return 0x14000000u | ((uint32_t)(delta >> 2) & 0x3ffffffu);
}

static void put_word(uint64_t at, uint32_t word) { memcpy((void *)(uintptr_t)at, &word, 4); }

int main(void) {
    uint32_t header[3];
    read_exactly(header, sizeof header);
    if (header[0] != MAGIC) {
        fprintf(stderr, "object harness: bad magic\n");
        return 2;
    }
    size_t svlb = svl_bytes = header[1];
    isasim_object_has_sve = header[2] & 1;
    tracing = header[2] >> 1 & 1;
    if (isasim_object_svl_bytes() != svlb) {
        fprintf(stderr, "object harness: SVL is %llu bytes, the input asks for %zu\n",
                (unsigned long long)isasim_object_svl_bytes(), svlb);
        return 3;
    }
    uint64_t words[4];  /* code base, code end, x30, TPIDR2_EL0 */
    read_exactly(words, sizeof words);
    code_base = words[0];
    code_end = words[1];
    uint32_t counts[4];  /* built-ins, regions, maps, read-only spans */
    read_exactly(counts, sizeof counts);
    uint64_t *table = malloc(16 * ((size_t)counts[0] + counts[1] + counts[2] + counts[3]) + 16);
    uint64_t *slots = table, *maps = slots + 2 * counts[0], *readonly = maps + 2 * counts[2];
    uint64_t *regions = readonly + 2 * counts[3];
    read_exactly(slots, 16 * (size_t)counts[0]);
    read_exactly(maps, 16 * (size_t)counts[2]);
    read_exactly(readonly, 16 * (size_t)counts[3]);
    read_exactly(regions, 16 * (size_t)counts[1]);
    region_table = regions;
    region_count = counts[1];
    fault_z = malloc(32 * svlb);
    fault_p = malloc(16 * svlb / 8);
    fault_za = malloc(svlb * svlb);
    static uint64_t x[NX], nzcv, svcr, tpidr2;
    static uint8_t zt0[ZT0_BYTES];
    uint8_t *z = malloc(32 * svlb), *p = malloc(16 * svlb / 8), *za = malloc(svlb * svlb);
    read_exactly(x, sizeof x);
    read_exactly(&nzcv, sizeof nzcv);
    read_exactly(&svcr, sizeof svcr);
    read_exactly(z, 32 * svlb);
    read_exactly(p, 16 * svlb / 8);
    read_exactly(za, svlb * svlb);
    read_exactly(zt0, sizeof zt0);
    tpidr2 = words[3];

    /* the code: [base - STUB_BYTES, end + 4) on pages of its own, the entry stub below it */
    uint64_t low = (code_base - STUB_BYTES) / PAGE * PAGE, high = (code_end + 4 + PAGE - 1) / PAGE * PAGE;
    void *want = (void *)(uintptr_t)low;
    if (mmap(want, high - low, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0)
        != want) {
        fprintf(stderr, "object harness: cannot map the code at 0x%llx\n", (unsigned long long)low);
        return 4;
    }
    read_exactly((void *)(uintptr_t)code_base, code_end - code_base);
    for (uint32_t n = 0; n < counts[0]; n++) {
        uint64_t at = slots[2 * n], routine = slots[2 * n + 1];
        uint32_t word = routine < isasim_object_routine_count ? branch(at, isasim_object_routines[routine]) : 0;
        if (!word) {
            fprintf(stderr, "object harness: built-in %llu at 0x%llx cannot be reached\n",
                    (unsigned long long)routine, (unsigned long long)at);
            return 6;
        }
        put_word(at, word);
    }
    uint32_t back = branch(code_end, (uint64_t)(uintptr_t)isasim_object_return);
    uint64_t stub = code_base - STUB_BYTES;
    uint32_t into = branch(stub + 4, code_base);
    if (!back || !into) {
        fprintf(stderr, "object harness: the harness is out of a branch's reach of 0x%llx\n",
                (unsigned long long)code_base);
        return 6;
    }
    put_word(code_end, back);
    put_word(stub, 0x5800005eu);            /* ldr x30, stub + 8 */
    put_word(stub + 4, into);               /* b base */
    memcpy((void *)(uintptr_t)(stub + 8), &words[2], 8);
    if (tracing) {  /* every word a BRK, its out-of-line copy in a slot within a branch's reach */
        size_t words = (code_end - code_base) / 4, bytes = (8 * words + PAGE - 1) / PAGE * PAGE;
        original = malloc(4 * words + 4);
        memcpy(original, (void *)(uintptr_t)code_base, 4 * words);
        void *place = (void *)(uintptr_t)SLOT_BASE;
        if (mmap(place, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0)
            != place) {
            fprintf(stderr, "object harness: cannot map the lockstep slots at 0x%x\n", SLOT_BASE);
            return 4;
        }
        step_slots = SLOT_BASE;
        for (size_t n = 0; n < words; n++) {
            uint32_t back = branch(step_slots + 8 * n + 4, code_base + 4 * n + 4);
            if (!back) {
                fprintf(stderr, "object harness: the lockstep slots are out of reach of the code\n");
                return 6;
            }
            put_word(step_slots + 8 * n, original[n]);
            put_word(step_slots + 8 * n + 4, back);
            put_word(code_base + 4 * n, STEP_BRK);
        }
        __builtin___clear_cache((char *)place, (char *)place + bytes);
        mprotect(place, bytes, PROT_READ | PROT_EXEC);
    }
    __builtin___clear_cache((char *)(uintptr_t)low, (char *)(uintptr_t)high);
    mprotect(want, high - low, PROT_READ | PROT_EXEC);

    for (uint32_t m = 0; m < counts[2]; m++) {
        void *at = (void *)(uintptr_t)maps[2 * m];
        if (mmap(at, maps[2 * m + 1], PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
                 -1, 0) != at) {
            fprintf(stderr, "object harness: cannot map memory at 0x%llx\n", (unsigned long long)maps[2 * m]);
            return 4;
        }
    }
    for (uint32_t r = 0; r < counts[1]; r++) read_exactly((void *)(uintptr_t)regions[2 * r], regions[2 * r + 1]);
    if (tracing) {
        shadow = malloc(sizeof *shadow * (counts[1] + 1));
        for (uint32_t r = 0; r < counts[1]; r++) {
            shadow[r] = malloc(regions[2 * r + 1] + 1);
            memcpy(shadow[r], (void *)(uintptr_t)regions[2 * r], regions[2 * r + 1]);
        }
    }
    for (uint32_t m = 0; m < counts[3]; m++)
        mprotect((void *)(uintptr_t)readonly[2 * m], readonly[2 * m + 1], PROT_READ);

    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_fault;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    static uint8_t signal_stack[1 << 19];  /* the signal frame holds ZA: 64 KiB at SVL 2048 */
    stack_t alternate = {.ss_sp = signal_stack, .ss_size = sizeof signal_stack};
    sigaltstack(&alternate, NULL);
    int signals[] = {SIGILL, SIGSEGV, SIGBUS, SIGFPE, SIGTRAP};
    for (size_t s = 0; s < sizeof signals / sizeof signals[0]; s++) sigaction(signals[s], &action, NULL);

    struct object_state state = {x, &nzcv, z, p, za, zt0, &svcr, &tpidr2};
    x[30] = stub;
    isasim_object_call(&state);

    if (!(svcr & 1)) {  /* out of streaming mode: Z beyond its low 128 bits and P read as zero */
        for (int n = 0; n < 32; n++) memset(z + n * svlb + 16, 0, svlb - 16);
        memset(p, 0, 16 * svlb / 8);
    }
    if (!(svcr & 2)) {  /* ZA off */
        memset(za, 0, svlb * svlb);
        memset(zt0, 0, sizeof zt0);
    }
    uint32_t head[2] = {0, 0};
    write_all(head, sizeof head);
    write_all(&svcr, sizeof svcr);
    write_all(x, sizeof x);
    write_all(&nzcv, sizeof nzcv);
    write_all(z, 32 * svlb);
    write_all(p, 16 * svlb / 8);
    write_all(za, svlb * svlb);
    write_all(zt0, sizeof zt0);
    for (uint32_t r = 0; r < counts[1]; r++) write_all((void *)(uintptr_t)regions[2 * r], regions[2 * r + 1]);
    write_all(&tpidr2, sizeof tpidr2);
    fflush(stdout);
    return 0;
}
