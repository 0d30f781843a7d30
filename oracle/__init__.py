"""Oracle: execution of the spec's semantics at high precision (rounding, Ziv loop, program interpreter)."""
