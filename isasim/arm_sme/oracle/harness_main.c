/* The test program the qemu oracle builds: reads test cases on stdin, runs each one's snippet
 * with the state it carries, and writes the resulting state on stdout.
 *
 * Stream (all integers little-endian, sizes in bytes, SVLB = streaming vector length in bytes):
 *   in:   header  u32 magic 'ISM2', u32 SVLB, u32 number of cases
 *         case    u32 snippet number, u32 regions, u32 maps, u32 read-only spans,
 *                 maps x (u64 start, u64 size), read-only spans x (u64 start, u64 size),
 *                 regions x (u64 address, u64 size),
 *                 u64 x[32] (x0-x30, sp), u64 nzcv, u64 svcr (the modes to start in: bit 0 SM, bit 1 ZA),
 *                 z[32][SVLB], p[16][SVLB/8], za[SVLB][SVLB], zt0[64],
 *                 the regions' bytes, one after another
 *   out:  per case u32 status, u32 signal number, then
 *                 status 0 (ran):    u64 svcr, and x ... the regions' bytes as in.  x30 reads back
 *                                    as it went in unless the snippet moved it off the return
 *                                    address the harness gave it.
 *                 status 1 (fault):  u64 fault address, i64 instruction index in the snippet
 *                                    (-1 if the fault was outside it), u64 pc; the program stops.
 * The maps are page-aligned spans covering the regions (the driver merges them), mapped at their
 * own addresses so a snippet uses the addresses its trace names; the read-only spans are the
 * pages only read-only regions touch, protected once the regions are filled.
 * A program whose SVL is not the one the header asks for exits with status 3, so a QEMU that
 * ignored the vector-length option can never be taken for one that honoured it.
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

struct case_state {          /* field order is what harness_entry.S reads: keep the two in step */
    uint64_t *x;             /* x0-x30 and sp (slot 30 holds the snippet's address on the way in) */
    uint64_t *nzcv;
    uint8_t *z;              /* z0-z31 */
    uint8_t *p;              /* p0-p15 */
    uint8_t *za;             /* ZA[0] .. ZA[SVLB-1] */
    uint8_t *zt0;
    uint64_t *svcr;
};

void isasim_run_case(const struct case_state *s);
uint64_t isasim_svl_bytes(void);
void isasim_snippet_return(void);          /* where a snippet's RET (and its end) lands */
extern const uint64_t isasim_snippets[];   /* start, end address of each snippet (snippets.S) */
extern const uint64_t isasim_snippet_count;

enum { MAGIC = 0x324d5349u /* "ISM2" */, NX = 32, ZT0_BYTES = 64, PAGE = 4096 };

static uint64_t current_snippet;

static void read_exactly(void *buf, size_t n) {
    if (n && fread(buf, 1, n, stdin) != n) {
        fprintf(stderr, "harness: input ended early\n");
        exit(2);
    }
}

static void write_all(const void *buf, size_t n) {
    if (n && fwrite(buf, 1, n, stdout) != n) exit(2);
}

/* A faulting snippet (SIGILL for an UNDEFINED instruction, SIGSEGV/SIGBUS for a memory fault)
 * ends the program after one fault record: which instruction of the snippet it was is
 * what a trace's fault names.  Only write(2) and _exit(2) here: both are async-signal-safe. */
static void on_fault(int sig, siginfo_t *info, void *context) {
    ucontext_t *uc = context;
    uint64_t pc = uc->uc_mcontext.pc;
    uint64_t start = isasim_snippets[2 * current_snippet], end = isasim_snippets[2 * current_snippet + 1];
    int64_t index = (pc >= start && pc < end) ? (int64_t)((pc - start) / 4) : -1;
    uint32_t head[2] = {1, (uint32_t)sig};
    uint64_t fault[3] = {(uint64_t)info->si_addr, (uint64_t)index, pc};
    unsigned char record[sizeof head + sizeof fault];
    memcpy(record, head, sizeof head);
    memcpy(record + sizeof head, fault, sizeof fault);
    ssize_t unused = write(1, record, sizeof record);
    (void)unused;
    _exit(0);
}

int main(void) {
    uint32_t header[3];
    read_exactly(header, sizeof header);
    if (header[0] != MAGIC) {
        fprintf(stderr, "harness: bad magic\n");
        return 2;
    }
    size_t svlb = header[1];
    if (isasim_svl_bytes() != svlb) {
        fprintf(stderr, "harness: SVL is %llu bytes, the input asks for %zu\n",
                (unsigned long long)isasim_svl_bytes(), svlb);
        return 3;
    }

    if (sysconf(_SC_PAGESIZE) != PAGE) {  /* the driver aligns the maps to 4 KiB pages */
        fprintf(stderr, "harness: page size is %ld, not %d\n", sysconf(_SC_PAGESIZE), PAGE);
        return 5;
    }

    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_fault;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;  /* the snippet's sp may be anything */
    /* The signal frame holds ZA when it is on: SVLB * SVLB bytes, 64 KiB at SVL 2048 by itself, so a
     * 64 KiB stack cannot take it (QEMU then kills the program with an uncaught SIGSEGV). */
    static uint8_t signal_stack[1 << 19];
    stack_t alternate = {.ss_sp = signal_stack, .ss_size = sizeof signal_stack};
    sigaltstack(&alternate, NULL);
    sigaction(SIGILL, &action, NULL);
    sigaction(SIGSEGV, &action, NULL);
    sigaction(SIGBUS, &action, NULL);
    sigaction(SIGFPE, &action, NULL);

    static uint64_t x[NX], nzcv, svcr;
    static uint8_t zt0[ZT0_BYTES];
    uint8_t *z = malloc(32 * svlb), *p = malloc(16 * svlb / 8), *za = malloc(svlb * svlb);
    struct case_state state = {x, &nzcv, z, p, za, zt0, &svcr};

    for (uint32_t n = 0; n < header[2]; n++) {
        uint32_t counts[4];  /* snippet, regions, maps, read-only spans */
        read_exactly(counts, sizeof counts);
        uint64_t *spans = malloc(16 * ((size_t)counts[1] + counts[2] + counts[3]) + 16);
        uint64_t *maps = spans, *readonly = maps + 2 * counts[2], *regions = readonly + 2 * counts[3];
        read_exactly(maps, 16 * (size_t)counts[2]);
        read_exactly(readonly, 16 * (size_t)counts[3]);
        read_exactly(regions, 16 * (size_t)counts[1]);
        read_exactly(x, sizeof x);
        read_exactly(&nzcv, sizeof nzcv);
        read_exactly(&svcr, sizeof svcr);
        read_exactly(z, 32 * svlb);
        read_exactly(p, 16 * svlb / 8);
        read_exactly(za, svlb * svlb);
        read_exactly(zt0, sizeof zt0);
        if (counts[0] >= isasim_snippet_count) {
            fprintf(stderr, "harness: no snippet %u\n", counts[0]);
            return 2;
        }
        for (uint32_t m = 0; m < counts[2]; m++) {
            void *want = (void *)(uintptr_t)maps[2 * m];
            void *got = mmap(want, maps[2 * m + 1], PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
            if (got != want) {
                fprintf(stderr, "harness: cannot map memory at 0x%llx\n", (unsigned long long)maps[2 * m]);
                return 4;
            }
        }
        for (uint32_t r = 0; r < counts[1]; r++)
            read_exactly((void *)(uintptr_t)regions[2 * r], regions[2 * r + 1]);
        for (uint32_t m = 0; m < counts[3]; m++)
            mprotect((void *)(uintptr_t)readonly[2 * m], readonly[2 * m + 1], PROT_READ);

        current_snippet = counts[0];
        uint64_t x30 = x[30];
        x[30] = isasim_snippets[2 * counts[0]];
        isasim_run_case(&state);
        if (x[30] == (uint64_t)(uintptr_t)isasim_snippet_return) x[30] = x30;

        uint32_t head[2] = {0, 0};
        write_all(head, sizeof head);
        write_all(&svcr, sizeof svcr);
        write_all(x, sizeof x);
        write_all(&nzcv, sizeof nzcv);
        write_all(z, 32 * svlb);
        write_all(p, 16 * svlb / 8);
        write_all(za, svlb * svlb);
        write_all(zt0, sizeof zt0);
        for (uint32_t r = 0; r < counts[1]; r++)
            write_all((void *)(uintptr_t)regions[2 * r], regions[2 * r + 1]);
        fflush(stdout);  /* a later case's fault record must come after this one, whole */
        for (uint32_t m = 0; m < counts[2]; m++) munmap((void *)(uintptr_t)maps[2 * m], maps[2 * m + 1]);
        free(spans);
    }
    return 0;
}
