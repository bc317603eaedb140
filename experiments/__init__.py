"""rpdi experiments."""
