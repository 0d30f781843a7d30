"""Second implementations written from other projects' sources, not from this project's spec/ (tests compare)."""
