"""rpdi usermodels."""
