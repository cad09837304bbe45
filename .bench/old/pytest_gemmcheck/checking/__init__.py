"""Checking one launch: the accuracy rule, the checksum, consistency (consensus), and the torch and Triton backends."""
