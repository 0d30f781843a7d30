"""Brute force over the seed's reduction schedules, written independently of
spec/schedule.py: every full binary tree whose in-order traversal is the
leaves in order (the seed's `reduce`, "exec(schedule) for some binary tree
schedule")."""
from __future__ import annotations


def every_tree(values: list, step) -> set:
    """Every value of every full binary tree over `values` in order, each
    inner node `step(left, right)`."""
    if len(values) == 1:
        return {values[0]}
    out = set()
    for k in range(1, len(values)):
        for a in every_tree(values[:k], step):
            for b in every_tree(values[k:], step):
                out.add(step(a, b))
    return out
