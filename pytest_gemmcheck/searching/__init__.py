"""Shape search with shrinking: ``gemmcheck.search`` finds a kernel's failing configurations
over m, n, k, quant and params with Hypothesis, and shrinks them to the smallest one.

space.py holds the axes and what "smallest" means, engine.py the search, entry.py its
arguments and probes (gemmcheck cases), in_pytest.py the fixture's form and its probes over
``--gemmcheck-processes``, result.py the answer. Nothing here is imported until a search runs.
"""
