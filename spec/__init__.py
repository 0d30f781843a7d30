"""The StableHLO specification, executable: types, the constraint DSL and one module per op."""
