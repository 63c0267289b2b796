"""The generated environment at run time: its tools, typed answers and verifier."""
