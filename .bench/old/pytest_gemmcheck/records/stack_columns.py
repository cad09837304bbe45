"""The fields of a stack fingerprint that are columns of the history's ``stack`` table (anything
else a fingerprint holds goes to its ``extra`` JSON): named once, for the fingerprint
(environment/stack.py), the table and the filters that match stacks (history/)."""

STACK_COLUMNS = (
    "host",
    "os",
    "python",
    "torch",
    "cuda",
    "hip",
    "gpu_name",
    "gpu_arch",
    "gpu_count",
    "driver",
    "triton",
    "flydsl",
)
