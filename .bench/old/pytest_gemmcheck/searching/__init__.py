"""Shape search with shrinking: ``gemmcheck.search`` finds a kernel's failing configurations
over m, n, k, quant and params with Hypothesis, and shrinks them to the smallest one.

space.py holds the axes and what "smallest" means, search.py the search, entry.py its
arguments and probes (gemmcheck cases), search_result.py the answer; the fixture's form and its
probes over ``--gemmcheck-processes`` are pytest_session/search_in_test.py's, the script's form
``gemmcheck.search`` api.py's. Nothing here is imported until a search runs.
"""
