"""The records every layer reads and writes: a case's result and its launches, and the
place-keyed mix that checksums and seeded operands share. The floor of the package: nothing here
imports any other part of it, nor torch, pytest or SQLAlchemy."""
