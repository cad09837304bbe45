"""Compiled kernels, checked without running them: static metrics, FlyDSL compile-only ISA, and the LDS-race lint."""
