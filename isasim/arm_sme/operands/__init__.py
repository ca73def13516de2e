"""The operands of A64 forms: how each reads its assembly text into encoding fields and back.

Each operand kind knows one piece of LLVM syntax and the fields it fills.  ``parse(text)``
returns the field values (or raises :class:`OperandError`: ``shape`` errors mean "this is
another form's operand", the others are rules the text breaks, which the assembler reports
first); ``text(fields)`` prints what llvm-objdump prints; ``value(fields)`` is what the
semantics receive.

Kinds are grouped by what they name: ``scalar`` (general registers, immediates, branch
targets), ``vector`` (Z and P registers, lists, indexed elements, patterns), ``za`` (vector
groups, tiles, slices) and ``address`` (the memory addressing forms).  This package gathers
them so that a form declaration imports every kind from one place.
"""

from __future__ import annotations

from .address import MulVlAddress, ScalarPlusScalar, SplitVlAddress


from .common import OperandError, parse_int


from .scalar import (AddImm, BaseOffset, BaseOnly, BitfieldImm, BitmaskImm, BitNumber, BranchTarget, Condition,
                     ExtendedReg, GReg, Imm, MovImm, MovWideImm, PreIndex, QReg, ShiftedReg, SImm, TestReg,
                     UnscaledOffset)


from .vector import Governing, Pattern, PredMerge, PReg, VectorRegister, ZIndexed, ZList, ZReg


from .za import TileList, ZaArrayVector, ZaSlice, ZaSliceList, ZaTile, ZaVectorGroup, ZaVectorRange


__all__ = ["AddImm", "BaseOffset", "BaseOnly", "BitfieldImm", "BitmaskImm", "BitNumber", "BranchTarget", "Condition",
           "ExtendedReg", "Governing", "GReg", "Imm", "MovImm", "MovWideImm", "MulVlAddress", "OperandError",
           "parse_int", "Pattern", "PredMerge", "PReg", "PreIndex", "QReg", "ScalarPlusScalar", "ShiftedReg", "SImm",
           "SplitVlAddress", "TestReg", "TileList", "UnscaledOffset", "VectorRegister", "ZaArrayVector", "ZaSlice",
           "ZaSliceList", "ZaTile", "ZaVectorGroup", "ZaVectorRange", "ZIndexed", "ZList", "ZReg"]
