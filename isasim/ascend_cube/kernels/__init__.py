"""Ascend cube kernels written from Python as the CANN kernels run them, instruction by instruction.

- :mod:`.qbmm`: the seed's quantised batch-matmul Cube kernel (QuantBatchMatmulV3 on the 950):
  :mod:`.qbmm_case` is one problem and :mod:`.qbmm_case_file` reads one from a case file,
  :mod:`.qbmm_rules` says which problems the kernel takes and which Fixpipe mode each selects,
  :mod:`.qbmm_scale` forms the quant words, :mod:`.qbmm_tiling` chooses and checks the tiling,
  :mod:`.qbmm_scheduler` orders the blocks, :mod:`.qbmm_run` runs the result on the simulator and
  compares C.
"""
