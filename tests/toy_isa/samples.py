"""The toy's test data: one small program and its initial state, as the conformance tests use them.

The program sums v*v and v*address into acc[0] and acc[1] over four words of memory (a
loop, so that run and step agree over a branch), then stores acc[0] and leaves acc[3]
as init seeded it.  One of the words is 0x7fffffff, so the products wrap.
"""

PROGRAM = """\
        li r0, 0x1000          # r0: the next word of V
        li r3, 4               # r3: words left
loop:   ld r1, [r0]
        mac acc[0], r1, r1     # acc[0] += v * v
        mac acc[1], r1, r0     # acc[1] += v * its address
        addi r0, r0, 4
        addi r3, r3, -1
        bnz r3, loop
        mova r2, acc[0]
        li r0, 0x2000
        st r2, [r0]
        halt
"""

INIT = {
    "regs": {"r2": "0x5"},
    "memory": [
        {"name": "V", "addr": "0x1000", "type": "int32", "shape": [1, 4], "values": [3, -2, 0x7fffffff, 1]},
        {"name": "OUT", "addr": "0x2000", "type": "int32", "shape": [1, 1], "size": 4},
    ],
    # acc[3] = 7, which nothing writes
    "arrays": {"acc": "00000000" "00000000" "00000000" "07000000"},
}

# A program that faults: a load from an address no region maps.
FAULTING = """\
        li r0, 0x9000
        ld r1, [r0]
        halt
"""
