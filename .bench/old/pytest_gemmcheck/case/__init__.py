"""A case: its identity, seeded inputs (quant modes) and reference; ``case.run`` hands its launches
to the launch loop (launch/)."""
