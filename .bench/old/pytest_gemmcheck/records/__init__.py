"""The records every layer reads and writes, which travel as JSON (xdist reports, the database,
the report page): a case's result and its launches, the sanitizer's findings, the stack's
columns, and the place-keyed mix that checksums and seeded operands share. The floor of the
package: nothing here imports any other part of it, nor torch, pytest or SQLAlchemy."""
