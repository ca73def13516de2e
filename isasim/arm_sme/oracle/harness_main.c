/* The test program the qemu oracle builds: reads test cases on stdin, runs each one's snippet
 * with the state it carries, and writes the resulting state on stdout.
 *
 * Stream (all integers little-endian, sizes in bytes, SVLB = streaming vector length in bytes):
 *   in:   header  u32 magic 'ISM2', u32 SVLB, u32 number of cases
 *         case    u32 snippet number, u32 0, u64 memory base, u64 memory size,
 *                 u64 x[18], u64 nzcv, z[32][SVLB], p[16][SVLB/8], za[SVLB][SVLB], zt0[64],
 *                 memory[memory size]
 *   out:  per case u32 status, u32 signal number, then
 *                 status 0 (ran):    u64 svcr, and the same state fields as in (x ... memory)
 *                 status 1 (fault):  u64 fault address, i64 instruction index in the snippet
 *                                    (-1 if the fault was outside it), u64 pc; the program stops.
 * The memory block is mapped at its own address, so a snippet uses the addresses its trace names.
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
    uint64_t *x;             /* x0-x17 */
    uint64_t *nzcv;
    uint8_t *z;              /* z0-z31 */
    uint8_t *p;              /* p0-p15 */
    uint8_t *za;             /* ZA[0] .. ZA[SVLB-1] */
    uint8_t *zt0;
    uint64_t *svcr;
};

void isasim_run_case(const struct case_state *s, void (*snippet)(void));
uint64_t isasim_svl_bytes(void);
extern const uint64_t isasim_snippets[];   /* start, end address of each snippet (snippets.S) */
extern const uint64_t isasim_snippet_count;

enum { MAGIC = 0x324d5349u /* "ISM2" */, NX = 18, ZT0_BYTES = 64 };

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

    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_fault;
    action.sa_flags = SA_SIGINFO;
    sigaction(SIGILL, &action, NULL);
    sigaction(SIGSEGV, &action, NULL);
    sigaction(SIGBUS, &action, NULL);
    sigaction(SIGFPE, &action, NULL);

    static uint64_t x[NX], nzcv, svcr;
    static uint8_t zt0[ZT0_BYTES];
    uint8_t *z = malloc(32 * svlb), *p = malloc(16 * svlb / 8), *za = malloc(svlb * svlb);
    long page = sysconf(_SC_PAGESIZE);
    struct case_state state = {x, &nzcv, z, p, za, zt0, &svcr};

    for (uint32_t n = 0; n < header[2]; n++) {
        uint32_t which[2];
        uint64_t region[2];
        read_exactly(which, sizeof which);
        read_exactly(region, sizeof region);
        read_exactly(x, sizeof x);
        read_exactly(&nzcv, sizeof nzcv);
        read_exactly(z, 32 * svlb);
        read_exactly(p, 16 * svlb / 8);
        read_exactly(za, svlb * svlb);
        read_exactly(zt0, sizeof zt0);
        if (which[0] >= isasim_snippet_count) {
            fprintf(stderr, "harness: no snippet %u\n", which[0]);
            return 2;
        }
        uint64_t base = region[0], size = region[1];
        uint64_t map_start = base & ~(uint64_t)(page - 1);
        uint64_t map_size = (base + size - map_start + page - 1) & ~(uint64_t)(page - 1);
        uint8_t *memory = (uint8_t *)(uintptr_t)base;
        if (size) {
            void *got = mmap((void *)(uintptr_t)map_start, map_size, PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
            if (got != (void *)(uintptr_t)map_start) {
                fprintf(stderr, "harness: cannot map memory at 0x%llx\n", (unsigned long long)base);
                return 4;
            }
            read_exactly(memory, size);
        }

        current_snippet = which[0];
        isasim_run_case(&state, (void (*)(void))(uintptr_t)isasim_snippets[2 * which[0]]);

        uint32_t head[2] = {0, 0};
        write_all(head, sizeof head);
        write_all(&svcr, sizeof svcr);
        write_all(x, sizeof x);
        write_all(&nzcv, sizeof nzcv);
        write_all(z, 32 * svlb);
        write_all(p, 16 * svlb / 8);
        write_all(za, svlb * svlb);
        write_all(zt0, sizeof zt0);
        write_all(memory, size);
        fflush(stdout);  /* a later case's fault record must come after this one, whole */
        if (size) munmap((void *)(uintptr_t)map_start, map_size);
    }
    return 0;
}
