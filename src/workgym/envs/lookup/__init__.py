"""A staff directory: one- and two-lookup questions with short answers, sized for small models."""
