"""A case: its identity, seeded inputs (quant modes) and reference, the launch loop, and the result it records."""
