"""What a case's own reference computes, as a stable text: part of the case's key and of the
key of the session's reference cache, so that two different references never share either.

A function that can be imported by its module and qualified name is identified by that name
(one name, one function, in any process). Any other, a lambda or a function made in another
function, by everything that decides what it computes: its code (bytecode, constants with the
code nested in them, the names it reads), its defaults, and the values it closes over; a
``functools.partial`` by its function, arguments and keywords. Values count by what they are,
never by where they sit in memory: numbers, strings, bytes, None, containers of them, dtypes,
devices (by their type: where a case runs is no part of its key), modules, and functions by the
same rules; classes and enums by their name where their module holds them by it. A value with no
such identity (a tensor, any other object)
cannot be told apart from another one: the reference is refused, and
``pytest_gemmcheck.named("name", fn)`` names it instead.

Bytecode is Python's own: a lambda's key is the same in every process of one Python version,
and may change with another version; a named reference, or a function importable by its name,
keeps its key across both.
"""

from __future__ import annotations

import enum
import functools
import hashlib
import json
import sys
import types
from typing import Any, Callable

import torch

from ..errors import CaseError

MAX_NAME = 255
MAX_VALUES = 10_000  # values rendered per reference: beyond, what it closes over is data, not configuration
MAX_DEPTH = 32  # containers within containers (a list that holds itself never ends)
NAMING = "name it: reference=pytest_gemmcheck.named('relu epilogue', fn), a name no other reference has"


class NamedReference:
    """A reference function under a name its user gave it (:func:`named`): the name is its
    whole identity, the same in every process and Python version."""

    def __init__(self, name: str, function: Callable):
        self.name = name
        self.function = function

    def __call__(self, inputs):
        return self.function(inputs)

    def __repr__(self) -> str:
        return f"named({self.name!r}, {reference_name(self.function)})"


def named(name: str, function: Callable) -> NamedReference:
    """``reference=named("relu epilogue", fn)``: a case's own reference identified by ``name``
    alone; different references must have different names."""
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME or not name.isprintable():
        raise CaseError(
            f"named(name, fn): the name must be printable text of 1 to {MAX_NAME} characters, got {name!r:.60}"
        )
    if not callable(function):
        raise CaseError(f"named({name!r}, fn): fn must be the reference, a callable fn(inputs), got {function!r:.60}")
    return NamedReference(name, function)


def reference_name(reference) -> str | None:
    """A case's own reference by name, for people: module and qualified name, a partial's
    function, or the name it was given."""
    if reference is None:
        return None
    if isinstance(reference, NamedReference):
        return reference.name
    if isinstance(reference, functools.partial):
        return f"partial({reference_name(reference.func)})"
    qualname = getattr(reference, "__qualname__", type(reference).__name__)
    return f"{getattr(reference, '__module__', '') or ''}.{qualname}"


def reference_identity(reference) -> str:
    """The reference's part of its case's key: its name where that is its identity, else its
    name and a hash of what it computes ('module.<locals>.<lambda>@3f2a9c0b1d2e4f56').
    CaseError, in one line, for a reference whose identity cannot be established."""
    if isinstance(reference, NamedReference):
        return f"named:{reference.name}"
    if _importable(reference):
        return reference_name(reference)
    try:
        rendered = _Renderer().value(reference, "")
    except _Unestablished as exc:
        raise CaseError(
            f"reference={reference_name(reference)}: what it computes cannot be told from {exc}; {NAMING}"
        ) from None
    text = json.dumps(rendered, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return f"{reference_name(reference)}@{hashlib.sha256(text.encode()).hexdigest()[:16]}"


class _Unestablished(Exception):
    """A value with no stable identity; its text says which and where."""


def _importable(named_thing) -> bool:
    """Whether a function or class is what its module's attribute of its qualified name holds:
    then that name is one thing in any process."""
    if not isinstance(named_thing, (types.FunctionType, types.BuiltinFunctionType, type)):
        return False
    found: Any = sys.modules.get(getattr(named_thing, "__module__", None) or "")
    for part in getattr(named_thing, "__qualname__", "").split("."):
        found = getattr(found, part, None)
        if found is None:
            return False
    return found is named_thing


class _Renderer:
    """Values as JSON-able structures, each tagged with what it is, in an order that does not
    depend on the process (sets and dicts sorted by their items' text)."""

    def __init__(self):
        self.count = 0
        self.depth = 0
        self.open: list[int] = []  # ids of the functions being rendered: a function met again inside itself

    def value(self, value, where: str):
        self.count += 1
        if self.count > MAX_VALUES or self.depth >= MAX_DEPTH:
            raise _Unestablished(
                f"more than {MAX_VALUES:,} values, or values nested more than {MAX_DEPTH} deep, in what it closes over"
            )
        self.depth += 1
        try:
            return self._value(value, where)
        finally:
            self.depth -= 1

    def _value(self, value, where: str):
        if isinstance(value, enum.Enum) and _importable(type(value)):
            return ["enum", _qualified(type(value)), value.name]
        if value is None or isinstance(value, (bool, int, str)):
            return value
        if isinstance(value, (float, complex)):
            return [type(value).__name__, repr(value)]
        if isinstance(value, bytes):
            return ["bytes", value.hex()]
        if value is Ellipsis:
            return ["ellipsis"]
        if isinstance(value, (tuple, list)):
            return [_qualified(type(value)), [self.value(item, f"{where}[{i}]") for i, item in enumerate(value)]]
        if isinstance(value, dict):
            items = [
                (self.value(key, f"{where} key"), self.value(item, f"{where}[{key!r:.20}]"))
                for key, item in value.items()
            ]
            return [_qualified(type(value)), sorted(items, key=_text)]
        if isinstance(value, (set, frozenset)):
            return [_qualified(type(value)), sorted((self.value(item, f"{where} item") for item in value), key=_text)]
        if isinstance(value, torch.dtype):
            return ["dtype", str(value)]
        if isinstance(value, torch.device):
            return ["device", value.type]
        if isinstance(value, types.ModuleType):
            return ["module", value.__name__]
        if isinstance(value, type) and _importable(value):  # a class made in a function has no name of its own
            return ["class", _qualified(value)]
        if isinstance(value, types.CodeType):
            return self.code(value, where)
        if isinstance(value, functools.partial):
            return [
                "partial",
                self.value(value.func, f"{where} function"),
                [self.value(arg, f"argument {i} of {where or 'it'}") for i, arg in enumerate(value.args)],
                self.value(dict(value.keywords), f"keywords of {where or 'it'}"),
            ]
        if isinstance(value, NamedReference):
            return ["named", value.name]
        if isinstance(value, types.FunctionType):
            return self.function(value, where)
        if isinstance(value, types.MethodType):
            return [
                "method",
                self.value(value.__self__, f"the object {where or 'it'} is bound to"),
                self.value(value.__func__, where),
            ]
        if isinstance(
            value,
            (
                types.BuiltinFunctionType,
                types.MethodDescriptorType,
                types.WrapperDescriptorType,
                types.ClassMethodDescriptorType,
                types.MethodWrapperType,
            ),
        ):
            owner = getattr(value, "__self__", None)
            if owner is not None and not isinstance(owner, (types.ModuleType, type)):
                raise _Unestablished(
                    f"an object of type {type(owner).__qualname__}, the object {where or 'it'} is bound to"
                )
            return ["builtin", getattr(value, "__module__", None) or "", getattr(value, "__qualname__", "")]
        if isinstance(value, type):
            what = f"the class {value.__qualname__}, which its module does not hold by that name"
        elif isinstance(value, torch.Tensor):
            what = "a tensor"
        else:
            what = f"an object of type {type(value).__qualname__}"
        raise _Unestablished(f"{what}, {where}" if where else what)

    def function(self, function: types.FunctionType, where: str):
        name = f"{function.__module__}.{function.__qualname__}"
        if _importable(function):
            return ["function", name]
        if id(function) in self.open:  # a function that reaches itself through its closure
            return ["itself", name]
        self.open.append(id(function))
        try:
            cells = []
            for variable, cell in zip(function.__code__.co_freevars, function.__closure__ or ()):
                try:
                    contents = cell.cell_contents
                except ValueError:  # a cell not yet filled
                    cells.append([variable, ["empty"]])
                    continue
                cells.append([variable, self.value(contents, f"{variable!r} in the closure of {name}")])
            return [
                "function",
                name,
                self.code(function.__code__, name),
                self.value(function.__defaults__, f"the defaults of {name}"),
                self.value(dict(function.__kwdefaults__ or {}), f"the keyword defaults of {name}"),
                cells,
            ]
        finally:
            self.open.pop()

    def code(self, code: types.CodeType, where: str):
        """What a code object runs: its bytecode, its constants (nested code too) and the names
        it reads; not its line numbers or file, so that moving it changes nothing."""
        return [
            "code",
            code.co_code.hex(),
            [self.value(const, f"a constant of {where}") for const in code.co_consts],
            list(code.co_names),
            list(code.co_freevars),
            code.co_argcount,
            code.co_kwonlyargcount,
            code.co_flags,
        ]


def _qualified(kind: type) -> str:
    return f"{kind.__module__}.{kind.__qualname__}"


def _text(rendered) -> str:
    return json.dumps(rendered, sort_keys=True, separators=(",", ":"))
