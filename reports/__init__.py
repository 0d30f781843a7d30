"""Reports: HTML, terminal tables, JSON results."""
