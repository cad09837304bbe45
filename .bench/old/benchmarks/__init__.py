"""The plugin's benchmarks: each module answers one question and runs from the repository root as
``python -m benchmarks.NAME``. benchmarks/README.md maps each question to its module, its latest
result under benchmarks/results/<machine>/ and the page of docs/ that uses it."""
