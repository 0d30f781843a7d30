"""Generators: skeletons, z3-solved shapes, special values, negative cases, MLIR emission, suite writer."""
