"""Every route and every field, sent odd input (tests/odd_input.py):
never a server error. The sweep that found the 500s fixed with it (a
NUL on PostgreSQL, strings longer than their column, integers beyond 64
bits, NaN, a vendor passthru body that is no object) runs here small;
``tools/api-fuzz --full`` runs it whole."""

from tests import odd_input


def _no_server_error(sweep: odd_input.Sweep, at_least: int) -> None:
    assert sweep.sent > at_least, sweep.sent
    assert not sweep.bad, '\n'.join('%s -> %s' % kv
                                    for kv in sweep.bad.items())


def test_no_route_answers_odd_input_with_a_server_error(api):
    sweep = odd_input.Sweep(api)
    sweep.routes()
    _no_server_error(sweep, 2500)


def test_no_field_answers_odd_values_with_a_server_error(any_db_api):
    sweep = odd_input.Sweep(any_db_api)
    sweep.fields()
    _no_server_error(sweep, 4000)


def test_no_inspection_rule_with_odd_arguments_breaks_an_inspection(
        any_db_api):
    sweep = odd_input.RuleSweep(any_db_api)
    sweep.run()
    _no_server_error(sweep, 100)
