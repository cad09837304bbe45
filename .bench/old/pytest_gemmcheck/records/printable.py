"""How recorded text that users chose (kernel names, tags, params, test ids, a kernel's
exception) is shown in a terminal or in markdown: every character Python does not call printable
(C0 and C1 controls and DEL, bidi controls such as U+202E and other invisible format characters,
line and paragraph separators, separators other than the space, private-use and unassigned code
points) is written as its Python escape ('\\x1b', '\\u202e', '\\U000e0001'), so that text cannot
move the cursor, recolour the terminal, or reorder or hide what is printed beside it. Machine
forms (JSON, CSV) are data and keep the characters themselves. A torch dtype is shown by its
name alone (``dtype_name``)."""

from __future__ import annotations


def _escape(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable(text: str, *, lines: bool = False) -> str:
    """``text`` as a terminal or markdown may show it; ``lines``: line breaks stay (a message of
    several lines), else they are escaped too (a table cell is one line)."""
    if text.isprintable():  # nearly always: one C-level pass
        return text
    return "".join(char if char.isprintable() or (lines and char == "\n") else _escape(char) for char in text)


def dtype_name(dtype) -> str:
    """A torch dtype by its name, as records hold it: ``bfloat16``, not ``torch.bfloat16``."""
    return str(dtype).removeprefix("torch.")
