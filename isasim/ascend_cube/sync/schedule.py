"""The order the pipes' queues run in: an interleaving that respects only what the program itself orders.

Each pipe runs its queue in program order.  A WaitFlag runs only once its flag is set.  The scalar unit's own
instructions (the setters, PipeBarrier<PIPE_ALL> and the flags of PIPE_S) run where the program puts them: every
earlier instruction before them and no later one, since the registers they set are read when the later
instructions are issued on the NPU and when they run here.  Within that, ``inorder`` runs the ready instruction
earliest in the program (the program order itself, where the flags allow it) and ``random`` a ready one chosen
by a seeded generator, so a missing flag changes the results as the NPU's timing may, reproducibly.
"""

from __future__ import annotations

import random


class Schedule:
    def __init__(self, pipes: list[int], in_program_order: list[bool], how: str, seed: int):
        """``pipes[k]``: the pipe number of instruction k; ``in_program_order[k]``: it runs where the program
        puts it (a scalar instruction)."""
        self.count = len(pipes)
        self.pipe_of = list(pipes)
        self.queues: dict[int, list[int]] = {}
        for k, pipe in enumerate(pipes):
            self.queues.setdefault(pipe, []).append(k)
        self.heads = {pipe: 0 for pipe in self.queues}
        self.head_of = {pipe: queue[0] for pipe, queue in self.queues.items()}  # its queue's head (None: ran all)
        self.fenced = [k for k, fence in enumerate(in_program_order) if fence]
        self.next_fence = 0  # the first fence not run yet, an index into fenced
        self.done = [False] * len(pipes)
        self.first_not_done = 0
        self.how = how
        self.random = random.Random(seed)

    def ran(self, k: int) -> None:
        self.done[k] = True
        pipe = self.pipe_of[k]
        queue = self.queues[pipe]
        if queue[self.heads[pipe]] == k:  # (a hung wait that raised did not run: it stays)
            self.heads[pipe] += 1
            self.head_of[pipe] = queue[self.heads[pipe]] if self.heads[pipe] < len(queue) else None
        while self.first_not_done < self.count and self.done[self.first_not_done]:
            self.first_not_done += 1
        while self.next_fence < len(self.fenced) and self.done[self.fenced[self.next_fence]]:
            self.next_fence += 1

    @property
    def finished(self) -> bool:
        return self.first_not_done >= self.count

    def heads_now(self) -> list[int]:
        """The instruction at the head of each pipe's queue (not yet run), in program order."""
        return sorted(k for k in self.head_of.values() if k is not None)

    def ready(self, can_wait) -> list[int]:
        """The instructions that may run now; ``can_wait(k)``: instruction k is no WaitFlag, or its flag is set."""
        fence = self.fenced[self.next_fence] if self.next_fence < len(self.fenced) else self.count
        out = []
        for k in self.heads_now():
            if k > fence:
                continue  # after a scalar instruction not run yet
            if k == fence and k != self.first_not_done:
                continue  # a scalar instruction waits for everything before it
            if can_wait(k):
                out.append(k)
        return out

    def next(self, can_wait) -> int | None:
        """``pick(ready(can_wait))``, or None when nothing is ready (inorder: the first ready one, found without
        listing the rest)."""
        if self.how != "inorder":
            ready = self.ready(can_wait)
            return self.pick(ready) if ready else None
        fence = self.fenced[self.next_fence] if self.next_fence < len(self.fenced) else self.count
        for k in self.heads_now():
            if k > fence:
                continue
            if k == fence and k != self.first_not_done:
                continue
            if can_wait(k):
                return k
        return None

    def pick(self, ready: list[int]) -> int:
        return ready[0] if self.how == "inorder" else self.random.choice(ready)
