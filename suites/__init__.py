"""Suite records on disk, their JSON I/O, and the judging of outputs; `core/` is the bundled suite."""
