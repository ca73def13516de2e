"""Programs of labels and jumps for the branch relaxation tests (test_assembler_vs_gnu_as.py, which holds their
images to GNU as's, and test_assembler_program.py)."""

from __future__ import annotations

import random


def jump_chain(count: int = 100, gap: int = 124, tail: int = 128) -> str:
    """Jump i lands on the label just after jump i+1; the last one lands after `tail` nops (so it must be long,
    and then, one after the other, every jump before it)."""
    lines = []
    for i in range(count):
        lines += [f"jmp after{i + 1}", f"after{i}:"] + ["nop"] * (gap if i < count - 1 else tail)
    lines.append(f"after{count}: nop")
    return "\n".join(lines)


_CONDITIONS = ["jmp", "je", "jne", "jl", "jge", "ja", "jbe", "js", "jo", "jp", "jnz", "jc"]


def branch_program(rng: random.Random, prefix: str) -> str:
    """Labels, jumps and runs of nops (and a few longer instructions) in a random order, jumping both ways."""
    label_count = rng.randint(1, 12)
    labels = [f"{prefix}l{i}" for i in range(label_count)]
    items = [f"{label}:" for label in labels]
    for _ in range(rng.randint(1, 25)):
        items.append(f"{rng.choice(_CONDITIONS)} {rng.choice(labels)}")
    for _ in range(rng.randint(0, 25)):
        roll = rng.random()
        if roll < 0.7:  # a gap near the rel8 limits, mostly of 10-byte movs so that programs stay short
            gap = rng.choice([1, 3, 10, 40, 60, 100, 117, 120, 123, 124, 125, 126, 127, 128, 129, 130, 250])
            items.append("\n".join(["mov rax, 0x1122334455667788"] * (gap // 10) + ["nop"] * (gap % 10)))
        elif roll < 0.85:
            items.append("mov rax, 0x1122334455667788")  # 10 bytes
        else:
            items.append("add QWORD PTR [rbx+0x1000], 0x12345")
    rng.shuffle(items)
    return "\n".join(items)
