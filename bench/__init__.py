"""The project's figures (DESIGN.md: ratios against a peer in the same run).

A package so that one bench builds on another and a test imports the one
it checks by name (`from bench import evaluation_orders`) — with the
repository root on sys.path, as pytest run from the root has it and as a
script here puts it (`python bench/stacked_blocks.py`) — instead of each
loading the other by its file path.
"""
