"""Task generation: families, phrasing, awkward variants and held-out splits."""
