"""Backend adapters: one module per implementation (oracle, xla, interpreter, iree, command)."""
