"""The semantics of the ascend_cube forms: the functions an instruction runs, each with the pseudocode of its
Ascend C call as its docstring (what ``isasim explain`` prints), one module per instruction family.  Each takes
the context (context.py), the form and its parameters by name; the form declarations (forms/) say which
function a form runs, which ``check_chip`` rule it must pass on a chip, and which ``access`` function works out
its checks and the bytes it reads.

    data_movement   DataCopy (GM -> L1 plain and Nd2Nz, L1 -> BT, L1 -> FB) and LoadData (L1 -> L0A/L0B)
    mmad            Mmad: C = A.B (+ C or the bias row) on the cube unit
    fixpipe         Fixpipe (L0C -> GM or L1 through the quant modes) and the registers that steer it
    access          Access and Span: what an instruction reads and writes, as its access function says
"""
