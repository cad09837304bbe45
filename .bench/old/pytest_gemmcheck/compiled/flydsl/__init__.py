"""FlyDSL support: stack fields and launches (``adapter``), compile-only ISA (``compile``), static
metrics (``metrics``). Submodules import FlyDSL only when used; this package imports nothing."""
