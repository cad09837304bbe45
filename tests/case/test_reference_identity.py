"""A case's own reference is identified by what it computes: closures by what they close over,
partials by their function and arguments, lambdas by their code; so two different references
never share a case key or the session's cached reference, and one reference has one key in
every process. A reference whose identity cannot be told is refused, saying how to name it."""

import functools
import os
import subprocess
import sys
import textwrap

import pytest
import torch

import pytest_gemmcheck as gc
from pytest_gemmcheck.case.case import Case, CaseContext
from pytest_gemmcheck.case.reference_identity import reference_identity
from pytest_gemmcheck.config.table import Settings
from pytest_gemmcheck.errors import CaseError, GemmcheckFailure


def epilogue(x, act):
    y = x.a.float() @ x.b.float().t()
    return torch.relu(y) if act == "relu" else torch.abs(y)


def epilogue_of(act):
    return lambda x: epilogue(x, act)


def relu_kernel(x):
    return lambda out: out.copy_(torch.relu(x.a.float() @ x.b.float().t()).to(out.dtype))


def verdicts(references):
    """Each reference's case, in one shared context (a session's caches), run with the relu
    kernel: (case key, failed) in order."""
    context = CaseContext(Settings(repeat=3))
    seen = []
    for reference in references:
        case = Case(context, "fused_epi", m=32, n=32, k=64, reference=reference)
        x = case.inputs()
        try:
            case.run(relu_kernel(x))
            seen.append((case.key, False))
        except GemmcheckFailure:
            seen.append((case.key, True))
    return seen


@pytest.mark.parametrize("order", [("abs", "relu"), ("relu", "abs")])
def test_closures_made_in_one_place_are_cases_of_their_own(order):
    (first_key, first_failed), (second_key, second_failed) = verdicts([epilogue_of(act) for act in order])
    assert first_key != second_key
    assert [first_failed, second_failed] == [act == "abs" for act in order]  # the relu kernel is wrong for abs


@pytest.mark.parametrize("order", [("abs", "relu"), ("relu", "abs")])
def test_partials_are_told_apart_by_their_arguments(order):
    (first_key, first_failed), (second_key, second_failed) = verdicts(
        [functools.partial(epilogue, act=act) for act in order]
    )
    assert first_key != second_key
    assert [first_failed, second_failed] == [act == "abs" for act in order]


def test_two_lambdas_on_one_line_differ():
    relu, absolute = lambda x: epilogue(x, "relu"), lambda x: epilogue(x, "abs")  # noqa: E731
    assert relu.__qualname__ == absolute.__qualname__
    assert relu.__code__.co_firstlineno == absolute.__code__.co_firstlineno
    assert reference_identity(relu) != reference_identity(absolute)
    assert [failed for _, failed in verdicts([absolute, relu])] == [True, False]


def test_the_same_reference_made_twice_is_one_case():
    assert reference_identity(epilogue_of("relu")) == reference_identity(epilogue_of("relu"))
    assert reference_identity(functools.partial(epilogue, act="relu")) == reference_identity(
        functools.partial(epilogue, act="relu")
    )


@pytest.mark.parametrize(
    "pair",
    [
        (lambda x: epilogue(x, 1), lambda x: epilogue(x, 1.0)),
        (lambda x: epilogue(x, True), lambda x: epilogue(x, 1)),
        (lambda x, scale=2: epilogue(x, scale), lambda x, scale=3: epilogue(x, scale)),
        (lambda x, *, dtype=torch.float16: x, lambda x, *, dtype=torch.bfloat16: x),
        (functools.partial(epilogue, act=("relu", 1)), functools.partial(epilogue, act=["relu", 1])),
        (functools.partial(epilogue, act={"a": 1}), functools.partial(epilogue, act={"a": 2})),
        (functools.partial(epilogue_of("relu")), functools.partial(epilogue_of("abs"))),
    ],
    ids=["int-float", "bool-int", "defaults", "kwdefaults", "tuple-list", "dicts", "functions-within"],
)
def test_what_differs_in_value_or_type_differs_in_identity(pair):
    first, second = pair
    assert reference_identity(first) != reference_identity(second)


def test_a_function_importable_by_its_name_keeps_its_name_as_its_identity():
    """As keys were before: a module's function is one function in any process."""
    assert reference_identity(epilogue) == f"{__name__}.epilogue"


def test_one_reference_has_one_identity_in_every_process(tmp_path):
    """No addresses, no hash-seed order (a set's order is the hash seed's): the same in two
    processes with two hash seeds."""
    (tmp_path / "refs.py").write_text(
        textwrap.dedent("""
        import functools

        def ref(x, act, table):
            return x

        def made(act):
            table = {"relu": 1, "gelu": 2, "silu": 3}
            return lambda x: ref(x, act, table) if act in {"relu", "gelu", "silu", "abs"} else None

        REFERENCES = [made("relu"), functools.partial(ref, act="abs", table=frozenset({"a", "b", "c", "d"}))]
    """)
    )
    script = (
        "import refs; from pytest_gemmcheck.case.reference_identity import reference_identity as r; "
        "print([r(f) for f in refs.REFERENCES])"
    )
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", script],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        for seed in ("1", "12345")
    ]
    seen = {process.communicate(timeout=300)[0] for process in processes}
    assert all(process.returncode == 0 for process in processes)
    assert len(seen) == 1 and seen.pop().count("@") == 2


def test_named_references_are_identified_by_their_name():
    bias = torch.ones(32)
    with_tensor = gc.named("relu plus bias", lambda x: epilogue(x, "relu") + bias)
    assert reference_identity(with_tensor) == "named:relu plus bias"
    assert [
        failed for _, failed in verdicts([gc.named("abs", epilogue_of("abs")), gc.named("relu", epilogue_of("relu"))])
    ] == [True, False]


@pytest.mark.parametrize(
    "name, function, words",
    [
        ("", epilogue, "the name must be printable text"),
        ("a\nb", epilogue, "the name must be printable text"),
        (3, epilogue, "the name must be printable text"),
        ("relu", "epilogue", "fn must be the reference"),
    ],
)
def test_a_bad_name_is_a_case_error(name, function, words):
    with pytest.raises(CaseError, match=words):
        gc.named(name, function)


def unnamed():
    bias = torch.ones(32)

    class Epilogue:
        def __call__(self, x):
            return epilogue(x, "relu")

        def relu(self, x):
            return epilogue(x, "relu")

    nested = []
    nested.append(nested)
    return [
        (lambda x: epilogue(x, "relu") + bias, "a tensor, 'bias' in the closure of"),
        (Epilogue(), "an object of type unnamed.<locals>.Epilogue"),
        (Epilogue().relu, "an object of type unnamed.<locals>.Epilogue, the object it is bound to"),
        (functools.partial(epilogue, act=Epilogue()), "an object of type unnamed.<locals>.Epilogue, keywords"),
        (lambda x: nested, "nested more than 32 deep"),
        (lambda x: Epilogue()(x), "the class unnamed.<locals>.Epilogue, which its module does not hold by that name"),
    ]


@pytest.mark.parametrize("index", range(len(unnamed())))
def test_a_reference_whose_identity_cannot_be_told_is_refused_in_one_line_saying_how_to_name_it(make_case, index):
    reference, words = unnamed()[index]
    with pytest.raises(CaseError) as raised:
        make_case("k", m=32, n=32, k=64, reference=reference)
    message = str(raised.value)
    assert words in message and "\n" not in message
    assert "reference=pytest_gemmcheck.named('relu epilogue', fn)" in message
