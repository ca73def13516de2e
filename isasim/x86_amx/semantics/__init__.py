"""The semantics of the x86_amx forms: the execute functions, written as the Intel SDM's Operation sections
read, one module per instruction family.  Each takes the context (context.py, ``cpu``) and the form's
operands; the form declarations (forms/) say which function a form runs, and its docstring is the text
``isasim explain`` prints.

    amx         the AMX instructions: TILECFG, tile loads and stores, the TMUL dot products
    scalar      the scalar x86-64 subset a kernel's loop and a compiled function need
    vector      the SSE/AVX/AVX-512 moves and zeroing idioms g++ emits around AMX kernels
    plain_run   the hot instructions of a kernel loop as a plain run executes them: the same steps, with
                what the operands name found once (every other case runs the functions above)
"""
