"""rpdi simulate."""
