"""The toy math behind each page: pure float64 numpy (and the kernels of gdn.ops), arrays out, no plotly.

    stream.py      one head's stream and its per-token, per-stage records (every page's common ground)
    start.py       start page: from softmax attention to one table, the shapes of a Gated DeltaNet block
    memory.py      memory-table page: worked examples, formulas with numbers, the editable table
    compare.py     compare page: linear attention / DeltaNet / Gated DeltaNet, presets, transpose bug
    playground.py  playground page: overwrite vs blur, repeated writes, key norm, capacity, half-life
    geometry.py    playground page: one delta-rule write in two dimensions, seen as a projection
    chunking.py    chunking page: affine maps, the in-chunk UT matrices, both kernels side by side
    cost.py        memory-cost page: state vs KV cache for every Qwen3.5 size
    classroom.py   classroom page: exercises, their live demos, timeline, glossary

How numbers are written in cells and formulas lives in gdn.units.
"""
