"""Every route and every field, sent odd input (tests/odd_input.py):
never a server error. The sweep that found the 500s fixed with it (a
NUL on PostgreSQL, strings longer than their column, integers beyond 64
bits, NaN, a vendor passthru body that is no object) runs here small;
``tools/api-fuzz --full`` runs it whole."""

from tests import harness
from tests import odd_input

# the sweeps of every field on SQLite; on PostgreSQL and MariaDB with the
# functional tests (tests/functional/test_odd_sweeps_on_servers.py)
db_api = harness.on_databases(['sqlite'], name='db_api')


def _no_server_error(sweep: odd_input.Sweep, at_least: int) -> None:
    assert sweep.sent > at_least, sweep.sent
    assert not sweep.bad, '\n'.join('%s -> %s' % kv
                                    for kv in sweep.bad.items())


def test_no_route_answers_odd_input_with_a_server_error(api):
    sweep = odd_input.Sweep(api)
    sweep.routes()
    _no_server_error(sweep, 2500)


def test_no_field_answers_odd_values_with_a_server_error(db_api):
    sweep = odd_input.Sweep(db_api)
    sweep.fields()
    _no_server_error(sweep, 4000)


def test_no_inspection_rule_with_odd_arguments_breaks_an_inspection(
        db_api):
    sweep = odd_input.RuleSweep(db_api)
    sweep.run()
    _no_server_error(sweep, 100)
