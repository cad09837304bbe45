"""Support shared by the plugin's own tests and benchmarks (mutation testing of the lint, the
bisect simulator, example kernels, timing helpers). Not shipped: the wheel holds
``pytest_gemmcheck`` alone. Importable from the repository root (pytest's ``pythonpath``; the
benchmarks run as ``python -m benchmarks.NAME``)."""
