"""``gemmcheck explain CASE``: which recorded fact explains a case's bad launches. The
statistics are judging/explanation.py's; the case's history is read and worded as a verdict
and a table of value tests by reporting/explanation_tables.py."""

from __future__ import annotations

from ..errors import CommandError
from . import arguments, reading


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "explain",
        parents=[arguments.database_option(), arguments.output_options()],
        help="which recorded fact (stack, GPU, stress, a collective case's rank, process, "
        "params) explains a case's bad launches",
    )
    parser.add_argument("case", metavar="CASE", help="a case key or a unique prefix of one")
    arguments.add_table_option(parser, "alpha", "family-wise significance, Holm-corrected over all value tests")
    parser.set_defaults(func=run)


def run(args) -> int:
    from ..jsontext import dumps
    from ..reporting.explanation_tables import document, explain_case, tables
    from ..reporting.tables import emit

    with reading.history(args) as engine:
        if not args.case.strip():
            raise CommandError("CASE: an empty key; gemmcheck history lists the cases")
        case, explanation, counts = explain_case(engine, args.case.strip(), alpha=args.alpha)
    form = arguments.output_form(args)
    if form == "json":
        print(dumps(document(case, explanation, counts), indent=1, default=str))
        return 0
    verdict, factors = tables(case, explanation, counts)
    if form == "csv":  # one table: the value tests
        emit(factors.render("csv"), "csv")
    else:
        print(f"{verdict.render(form)}\n\n{factors.render(form)}")
    return 0
