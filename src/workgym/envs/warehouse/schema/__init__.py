"""Schema understanding: profiles, keys, relations, column roles and the schema card."""
