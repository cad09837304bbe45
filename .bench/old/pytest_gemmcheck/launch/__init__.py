"""The launch loop of ``case.run``: poison, launch, synchronise and check, repeated (loop.py), with
its parts: when to stop, the output buffers and their poison, what a launch may not touch, what is
in flight, the deadline and each launch's record."""
