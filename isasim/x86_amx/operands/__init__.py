"""x86 operands: what the assembler parses and the decoder produces (syntax.py: registers, immediates, memory
operands and branch targets, printed as ``objdump -M intel`` prints them), and the registers they can name
(registers.py: the GPR views, the vector registers, the tiles).
"""

from .registers import (GPR64, GPR_VIEWS, TILE_REGISTERS, VECTOR_REGISTERS, GprView, VectorRegister, gpr_name,
                        tile_number, vector_register)
from .syntax import SIZE_NAMES, Imm, Mem, Operand, Reg, Target, memory_text, operand_text, signed, width

__all__ = ["GPR64", "GPR_VIEWS", "TILE_REGISTERS", "VECTOR_REGISTERS", "GprView", "VectorRegister", "gpr_name",
           "tile_number", "vector_register", "SIZE_NAMES", "Imm", "Mem", "Operand", "Reg", "Target", "memory_text",
           "operand_text", "signed", "width"]
