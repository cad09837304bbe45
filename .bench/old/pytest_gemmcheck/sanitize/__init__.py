"""A case's launch under NVIDIA compute-sanitizer: finding the binary (``locate``), the command
for one tool (``invocation``), running it under a time limit (``process``), reading its XML report
(``report``) and what only its text output says (``text``), leaving out the harness's own
kernels (``harness``), and the outcome of one tool as a record (``tool_launch``). No pytest, torch or
SQLAlchemy here: the child that launches the kernel is the caller's."""
