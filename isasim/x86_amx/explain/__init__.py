"""``isasim explain`` for Intel AMX and the scalar x86-64 subset (the explainer the x86_amx ISA object returns).

Every section comes from the one definition the simulator runs:

* the encoding: the instruction's own bytes as byte units of bit fields, read with
  the encoder's and decoder's own layouts and checked field by field against the
  form's SDM opcode row (``AmxForm.opcode``, a parsed ``VEX.128.66.0F38.W0 5E
  11:rrr:bbb``); for the scalar subset, against the iced-x86 opcode row (``o64 83 /0
  ib``) the decoder matched (:mod:`.encoding_view`);
* the operands: the SDM's instruction and operand-encoding columns, the parameter
  names of the semantics function and the form's declared operand roles;
* the operation: the semantics function's docstring;
* the faults: the form's ``faults``, the #UD of a CPU without its CPUID feature
  (from the CPU models) and the encoding #UDs its opcode row implies;
* the worked example: a small program (LDTILECFG, TILELOADDs, ...) runs on a real
  machine up to the instruction, which is then stepped; every number shown is read
  from that machine before and after the step.  One module per topic:
  :mod:`.tilecfg`, :mod:`.tile_memory`, :mod:`.tile_zero`, :mod:`.tmul`, :mod:`.scalar` and
  :mod:`.vector` (the SSE/AVX/AVX-512 moves, whose encodings :mod:`.encoding_view` splits
  into legacy, VEX and EVEX fields); :mod:`.amx_forms` puts an AMX page together.

The command-line options only x86 has are declared in :mod:`.settings`.
"""

from __future__ import annotations

from ...core.explain import ExplainOptions, Explainer, Explanation, ReferencePage
from .settings import INIT_HELP, OPTIONS, Settings

__all__ = ["EXPLAINER", "INIT_HELP", "OPTIONS", "SCREENSHOTS", "explain", "reference_pages"]

# (file name, instruction): the terminal screenshots `isasim docs` writes under screenshots/
SCREENSHOTS = (
    ("explain-tdpbusd.svg", "tdpbusd tmm0, tmm1, tmm2"),
    ("explain-tdpbf16ps.svg", "tdpbf16ps tmm0, tmm1, tmm2"),
)

# The example each reference page explains (teaching content, not semantics).
_AMX_EXAMPLES = {
    "ldtilecfg": "ldtilecfg [rcx]",
    "sttilecfg": "sttilecfg [rdx]",
    "tilerelease": "tilerelease",
    "tilezero": "tilezero tmm0",
    "tileloadd": "tileloadd tmm1, [rdi+r8*1+0x40]",
    "tileloaddt1": "tileloaddt1 tmm1, [rdi+r8*1]",
    "tilestored": "tilestored [rdx+r8*1], tmm0",
}
_SCALAR_EXAMPLES = {
    "mov": "mov rax, QWORD PTR [rdi+rcx*8+0x10]", "movabs": "movabs rax, 0x123456789abcdef0",
    "lea": "lea rax, [rdi+rcx*4+0x40]", "add": "add rax, rbx", "sub": "sub rcx, 0x40", "cmp": "cmp rcx, rdx",
    "inc": "inc r8", "dec": "dec ecx", "xor": "xor eax, eax", "test": "test rcx, rcx", "imul": "imul rax, rbx",
    "jmp": "jmp 0x400010", "nop": "nop", "ret": "ret",
    "movzx": "movzx eax, WORD PTR [rdi+0x8]", "movsx": "movsx ecx, BYTE PTR [rdi]", "movsxd": "movsxd rcx, ecx",
    "cdqe": "cdqe", "xchg": "xchg ax, ax", "push": "push rbp", "pop": "pop rbp", "leave": "leave",
    "shl": "shl rcx, 0xa", "shr": "shr eax, cl", "sar": "sar rax, 1",
}
# The vector moves as g++ emits them around AMX kernels (building the 64-byte tile configuration on the
# stack), one per encoding family: legacy SSE, two- and three-byte VEX, EVEX with a compressed disp8.
_VECTOR_EXAMPLES = {
    "pxor": "pxor xmm0, xmm0", "vpxor": "vpxor ymm1, ymm2, ymm3", "movaps": "movaps xmm3, XMMWORD PTR [rdi+0x10]",
    "movups": "movups XMMWORD PTR [rsp-0x47], xmm0", "movdqa": "movdqa xmm0, XMMWORD PTR [rsi+0x10]",
    "vmovdqa": "vmovdqa ymm5, YMMWORD PTR [rdi+0x40]", "vmovdqu8": "vmovdqu8 ZMMWORD PTR [rsp-0x40], zmm0",
    "vpbroadcastw": "vpbroadcastw ymm1, xmm2", "vzeroupper": "vzeroupper",
}



def explain(instruction: str | None, code: bytes | None, options: ExplainOptions) -> Explanation:
    # the topic modules load on first use: the command's parser imports this package for OPTIONS alone
    from ..forms import amx
    from ..forms import control as control_forms
    from ..forms import vector as vector_forms
    from .amx_forms import explain_amx
    from .common import parse_instruction
    from .scalar import explain_scalar
    from .vector import explain_vector

    settings = Settings.of(options)
    ins = parse_instruction(instruction, code)
    if isinstance(ins.form, amx.AmxForm):
        return explain_amx(ins, ins.form, settings)
    from ..forms import amx_extensions

    if isinstance(ins.form, amx_extensions.AmxEvexForm):  # AMX-AVX512 (EVEX, a zmm destination)
        from .amx_extensions import explain_evex

        return explain_evex(ins, ins.form, settings)
    if isinstance(ins.form, vector_forms.VectorForm):
        return explain_vector(ins, ins.form, settings)
    if isinstance(ins.form, control_forms.BuiltinForm):
        from .control import explain_builtin

        return explain_builtin(ins, ins.form, settings)
    return explain_scalar(ins, ins.form, settings)


def reference_pages() -> list[ReferencePage]:
    from ..forms import amx, control, scalar, vector

    pages = []
    for form in amx.FORMS:
        example = _AMX_EXAMPLES.get(form.mnemonic, f"{form.mnemonic} tmm0, tmm1, tmm2")
        pages.append(ReferencePage(form.mnemonic, form.feature, example, form.syntax, form.summary))
    for form in scalar.FORMS:
        example = _SCALAR_EXAMPLES.get(form.mnemonic) or form.example
        if example is None and form.mnemonic.startswith("j"):
            example = f"{form.mnemonic} 0x400010"
        pages.append(ReferencePage(form.mnemonic, "scalar x86-64 subset", example, form.syntax, form.summary))
    for form in vector.FORMS:
        example = _VECTOR_EXAMPLES.get(form.mnemonic) or form.example  # the form's own, since issue 27
        pages.append(ReferencePage(form.slug, "vector (SSE, AVX, AVX-512)", example,
                                   form.syntax, form.summary))
    for form in control.FORMS:
        pages.append(ReferencePage(form.slug, "calls and indirect jumps", form.example, form.syntax, form.summary))
    for form in control.BUILTINS.values():
        pages.append(ReferencePage(form.slug, "built-in C functions (called, not decoded)", form.name,
                                   form.syntax, form.summary))
    from .amx_extensions import reference_pages as extension_pages
    from .evidence import evidence

    pages += extension_pages()
    for page in pages:  # the mnemonic is the example's first word (a built-in's page: its C name)
        page.evidence = evidence(page, page.example.split()[0].lower())
    return pages


class X86AmxExplainer(Explainer):
    OPTIONS = OPTIONS
    INIT_HELP = INIT_HELP
    SCREENSHOTS = SCREENSHOTS

    def explain(self, instruction: str | None, code: bytes | None, options: ExplainOptions) -> Explanation:
        return explain(instruction, code, options)

    def reference_pages(self) -> list[ReferencePage]:
        return reference_pages()

    def extra_pages(self) -> dict[str, str]:
        from .amx_extensions import EXTENSIONS_PAGE

        return {"amx-extensions": EXTENSIONS_PAGE}


EXPLAINER = X86AmxExplainer()
