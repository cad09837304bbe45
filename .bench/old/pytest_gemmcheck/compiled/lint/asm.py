"""Parse AMDGPU assembly text (as LLVM prints it) into kernels, instructions and metadata."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

_LABEL = re.compile(r"^([A-Za-z_.$][\w.$]*):\s*(?:;.*)?$")
_NUMERIC_LABEL = re.compile(r"^(\d+):\s*(.*)$")  # inline asm's local labels: "1:", referred to as 1f / 1b
_NUMERIC_REFERENCE = re.compile(r"^(\d+)([fb])$")
_KERNEL_DIRECTIVE = re.compile(r"^\.amdhsa_kernel\s+(\S+)")
_AMDHSA_FIELD = re.compile(r"^\.(amdhsa_\w+)\s+(-?\w+)")
_SET_FIELD = re.compile(r"^\.set\s+\.L(.+)\.(num_vgpr|num_agpr|numbered_sgpr|private_seg_size),\s*(\d+)")
_TARGET = re.compile(r'^\.amdgcn_target\s+"([^"]+)"')
_ARCH = re.compile(r"(gfx[0-9a-f]+)")
_TYPE_FUNCTION = re.compile(r"^\.type\s+([^,\s]+)\s*,\s*@function")


@functools.lru_cache(maxsize=None)
def _base(mnemonic: str) -> str:
    return re.sub(r"_(e32|e64|sdwa|dpp|e64_dpp)$", "", mnemonic)


@dataclass(frozen=True)
class Instruction:
    """One machine instruction as written: where it is and its parts."""

    index: int  # position in its kernel's instruction list
    line: int  # 1-based line in the assembly text
    text: str  # the instruction without its comment
    mnemonic: str
    operands: tuple[str, ...]
    modifiers: tuple[str, ...]

    @property
    def base(self) -> str:
        """The mnemonic without its encoding suffix (``_e32``, ``_e64``, ``_sdwa``, ``_dpp``)."""
        return _base(self.mnemonic)

    def modifier(self, name: str) -> str | None:
        """The value of ``name:value``, ``''`` for a bare ``name``, None when absent."""
        for mod in self.modifiers:
            if mod == name:
                return ""
            if mod.startswith(name + ":"):
                return mod[len(name) + 1 :]
        return None


@dataclass
class Kernel:
    """One kernel function: its instructions, local labels, descriptor and metadata fields."""

    name: str
    instructions: list[Instruction] = field(default_factory=list)
    labels: dict[str, int] = field(default_factory=dict)  # label -> index of the next instruction
    descriptor: dict[str, int] = field(default_factory=dict)  # .amdhsa_* fields
    metadata: dict[str, object] = field(default_factory=dict)  # amdhsa.kernels entry (scalar keys, lists)
    counts: dict[str, int] = field(default_factory=dict)  # .set .L<name>.num_vgpr etc.


@dataclass
class AsmModule:
    """A parsed assembly file."""

    target: str
    arch: str
    kernels: dict[str, Kernel]
    path: str = "<text>"


def split_operands(rest: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Split what follows the mnemonic into comma-separated operands and trailing modifiers."""
    parts: list[str] = []
    depth = 0
    current = []
    for ch in rest:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    tail = "".join(current).strip()
    modifiers: list[str] = []
    if tail:
        words = _split_words(tail)
        if parts or not _is_modifier(words[0]):
            parts.append(words[0])
            words = words[1:]
        modifiers = words
    return tuple(p for p in parts if p), tuple(modifiers)


def _split_words(text: str) -> list[str]:
    words, depth, current = [], 0, []
    for ch in text:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch.isspace() and depth == 0:
            if current:
                words.append("".join(current))
                current = []
        else:
            current.append(ch)
    if current:
        words.append("".join(current))
    return words


def _is_modifier(word: str) -> bool:
    return ":" in word or word in {"offen", "idxen", "lds", "glc", "slc", "nt", "sc0", "sc1", "gds", "off"}


def parse_instruction(text: str, *, index: int = 0, line: int = 0) -> Instruction:
    """Parse one instruction line (without comment) into an :class:`Instruction`."""
    text = text.strip()
    mnemonic, _, rest = text.partition(" ")
    rest = rest.strip()
    if mnemonic == "s_waitcnt":
        # "s_waitcnt vmcnt(1) lgkmcnt(0)" or a raw encoded immediate: keep the fields whole.
        return Instruction(index, line, text, mnemonic, (rest,) if rest else (), ())
    operands, modifiers = split_operands(rest)
    return Instruction(index, line, text, mnemonic, operands, modifiers)


def _strip_comment(line: str) -> str:
    for marker in (";", "//"):
        pos = line.find(marker)
        if pos >= 0:
            line = line[:pos]
    return line.strip()


def parse(text: str, path: str = "<text>") -> AsmModule:
    """Parse a whole assembly file: every kernel's code, descriptor and metadata."""
    lines = text.splitlines()
    target = ""
    functions: set[str] = set()
    for raw in lines:
        stripped = raw.strip()
        m = _TARGET.match(stripped)
        if m and not target:
            target = m.group(1)
        t = _TYPE_FUNCTION.match(stripped)
        if t:
            functions.add(t.group(1))
        if stripped.startswith(".amdhsa_kernel"):
            functions.add(stripped.split()[1])
    arch_match = _ARCH.search(target)
    arch = arch_match.group(1) if arch_match else ""

    kernels: dict[str, Kernel] = {}
    current: Kernel | None = None
    descriptor_of: Kernel | None = None
    in_metadata = False
    metadata_lines: list[str] = []
    numeric: dict[str, list[tuple[str, int]]] = {}  # kernel name -> (label, index of the next instruction)
    for lineno, raw in enumerate(lines, start=1):
        stripped = raw.strip()
        if in_metadata:
            if stripped.startswith(".end_amdgpu_metadata"):
                in_metadata = False
            else:
                metadata_lines.append(raw)
            continue
        if stripped.startswith(".amdgpu_metadata"):
            in_metadata = True
            current = None
            continue
        m = _KERNEL_DIRECTIVE.match(stripped)
        if m:
            descriptor_of = kernels.setdefault(m.group(1), Kernel(m.group(1)))
            current = None
            continue
        if stripped.startswith(".end_amdhsa_kernel"):
            descriptor_of = None
            continue
        if descriptor_of is not None:
            f = _AMDHSA_FIELD.match(stripped)
            if f:
                descriptor_of.descriptor[f.group(1)] = _int_or_zero(f.group(2))
            continue
        s = _SET_FIELD.match(stripped)
        if s:
            kernels.setdefault(s.group(1), Kernel(s.group(1))).counts[s.group(2)] = int(s.group(3))
            continue
        code = _strip_comment(raw)
        if not code:
            continue
        local = _NUMERIC_LABEL.match(code)
        if local and current is not None:
            numeric.setdefault(current.name, []).append((local.group(1), len(current.instructions)))
            code = local.group(2).strip()
            if not code:
                continue
        label = _LABEL.match(code)
        if label:
            name = label.group(1)
            if name in functions:
                current = kernels.setdefault(name, Kernel(name))
            elif name.startswith(".Lfunc_end"):
                current = None
            elif current is not None:
                current.labels[name] = len(current.instructions)
            continue
        if current is None or code.startswith("."):
            continue
        current.instructions.append(parse_instruction(code, index=len(current.instructions), line=lineno))

    for name, definitions in numeric.items():
        _resolve_numeric_labels(kernels[name], definitions)
    for entry in _parse_metadata(metadata_lines):
        name = entry.get(".name")
        if isinstance(name, str):
            kernels.setdefault(name, Kernel(name)).metadata = entry
    return AsmModule(target=target, arch=arch, kernels=kernels, path=path)


def _resolve_numeric_labels(kernel: Kernel, definitions: list[tuple[str, int]]) -> None:
    """Rename ``1f`` / ``1b`` branch targets to the definition they mean: the next ``1:`` after
    the branch, or the last one before it (GNU as semantics), each under a name of its own."""
    for number, (label, position) in enumerate(definitions):
        kernel.labels[f".Llocal{label}_{number}"] = position
    for i, inst in enumerate(kernel.instructions):
        if not inst.operands:
            continue
        reference = _NUMERIC_REFERENCE.match(inst.operands[0])
        if not reference or not inst.mnemonic.startswith(("s_branch", "s_cbranch")):
            continue
        label, direction = reference.groups()
        matches = [
            (number, position)
            for number, (name, position) in enumerate(definitions)
            if name == label and (position > i if direction == "f" else position <= i)
        ]
        if not matches:
            continue
        number, _ = matches[0] if direction == "f" else matches[-1]
        name = f".Llocal{label}_{number}"
        kernel.instructions[i] = Instruction(
            inst.index,
            inst.line,
            inst.text.replace(inst.operands[0], name, 1),
            inst.mnemonic,
            (name,) + inst.operands[1:],
            inst.modifiers,
        )


def _int_or_zero(text: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        return 0


def _scalar(text: str) -> object:
    text = text.strip().strip("'\"")
    try:
        return int(text, 0)
    except ValueError:
        pass
    if text in ("true", "false"):
        return text == "true"
    return text


def _parse_metadata(lines: list[str]) -> list[dict[str, object]]:
    """The ``amdhsa.kernels`` entries of the YAML metadata: top-level scalars and scalar lists.

    A small reader for the fixed shape LLVM writes; nested lists of maps (``.args``) are skipped.
    """
    entries: list[dict[str, object]] = []
    in_kernels = False
    entry: dict[str, object] | None = None
    entry_indent = 0
    list_key: str | None = None
    for raw in lines:
        if not raw.strip() or raw.strip() in ("---", "..."):
            continue
        indent = len(raw) - len(raw.lstrip())
        text = raw.strip()
        if indent == 0:
            in_kernels = text.startswith("amdhsa.kernels:")
            entry = None
            continue
        if not in_kernels:
            continue
        if text.startswith("- ") and (entry is None or indent <= entry_indent):
            entry = {}
            entries.append(entry)
            entry_indent = indent
            text = text[2:].strip()
            indent += 2
            list_key = None
        if entry is None:
            continue
        key_indent = entry_indent + 2
        if indent == key_indent and text.startswith("."):
            key, _, value = text.partition(":")
            if value.strip():
                entry[key] = _scalar(value)
                list_key = None
            else:
                list_key = key
                entry[key] = []
        elif list_key is not None and indent > key_indent and text.startswith("- "):
            item = text[2:].strip()
            values = entry[list_key]
            if isinstance(values, list):
                if item.startswith(".") and ":" in item:
                    entry[list_key] = None  # a list of maps: not needed here
                    list_key = None
                else:
                    values.append(_scalar(item))
    return [{k: v for k, v in e.items() if v is not None} for e in entries]
