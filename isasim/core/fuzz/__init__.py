"""Differential fuzzing, for any ISA: random programs run on the simulator and on another backend,
compared, and every divergence shrunk and written as a trace that reproduces it.

What an ISA brings
    One :class:`CaseGenerator` per subset of its instructions (x86_amx: "scalar" and "amx").  A
    generator draws cases (hypothesis strategies: the same seed draws the same cases), turns a case
    into a program and its initial state, says how big a case is and how to cut it short, and counts
    what a run of the simulator executed.  A generator whose cases can share one program (a backend
    that is slow to start, such as a CPU in a child process, then starts once per batch) also
    provides the :class:`BatchingGenerator` hooks.  A generator whose hypothesis strategy costs more
    than running its cases (x86_amx's amx: 15-30 ms a case against 0.1 ms with numpy) may also draw
    them itself, the :class:`DrawingGenerator` hooks; its cases then run by default drawn that way
    (``draw``: "numpy", the name the command line gives these drawers) and are shrunk greedily.
    Nothing here knows an ISA's registers or faults.

A shard (:mod:`.shard`; run by ``run_shard``, :mod:`.runner`)
    A plain description (ISA, subset, seed, number of cases, backend, mode, configuration) that can
    be handed to another process or machine, which draws its cases (:mod:`.drawing`) and diffs them,
    in batches where the generator batches.  ``diff`` compares the two backends at the end or
    (lockstep) after every instruction.  A divergence is pinned to its case, confirmed by diffing
    that case alone, shrunk (:mod:`.shrinkers`) with hypothesis's shrinker (the cases are drawn again
    from the same seed, and when the failing one comes up hypothesis shrinks it, every candidate
    diffed alone), or, for a case the generator drew itself, which hypothesis cannot draw again, by a
    greedy shrinker over the generator's ``reductions``, and made a trace (:mod:`.traces`) whose
    ``expect`` is what the other backend did with the shrunk case.  All of it runs where the shard
    runs: the other backend may be that worker's silicon.  What it found is a :mod:`.results`.

A campaign (``run_campaign``, in :mod:`isasim.core.campaign`)
    The subsets the other backend can run (:mod:`.subsets`), their cases cut into shards, the shards
    run on a pool (this process, local processes, a Dask cluster), the results merged in shard
    order, the traces written, and a campaign directory that lets a killed campaign resume.

The names are imported from the module that defines them; this package's namespace holds none.
"""
