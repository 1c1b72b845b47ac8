"""The sweeps of odd input and of odd BMC answers on PostgreSQL and
MariaDB: a text or a number that one database keeps and another refuses
(a NUL, a surrogate, an integer beyond 64 bits, a string longer than its
column) must not answer a server error or stop a node there.  The unit
tests run the same sweeps on SQLite (tests/unit/api/test_odd_input.py,
tests/unit/drivers/test_redfish_odd_*.py); here, with the servers, they
take about half a minute of the two cores, which the unit tests' two
minutes do not have."""

from tests import harness
from tests.unit.api import test_odd_input as odd_input
from tests.unit.drivers import test_redfish_odd_chassis as odd_chassis
from tests.unit.drivers import test_redfish_odd_storage as odd_storage
from tests.unit.drivers import test_redfish_odd_systems as odd_systems
from tests.unit.drivers import test_redfish_odd_updates as odd_updates
from tests.unit.drivers import test_redfish_odd_vmedia as odd_vmedia

db_api = harness.on_databases(harness.SERVER_DATABASES, name='db_api')
api = harness.on_databases(harness.SERVER_DATABASES, odd_systems.SERVICE)
# one fleet large enough for each sweep (each system its own odd answer)
fleet = odd_systems.sized_fleet(max(
    len(odd_systems.ODD), len(odd_storage.ODD), len(odd_vmedia.ODD),
    len(odd_updates.ODD), len(odd_chassis.ODD)))
sent = odd_chassis.sent

test_no_field_answers_odd_values_with_a_server_error = \
    odd_input.test_no_field_answers_odd_values_with_a_server_error
test_no_inspection_rule_with_odd_arguments_breaks_an_inspection = \
    odd_input.test_no_inspection_rule_with_odd_arguments_breaks_an_inspection
test_odd_systems_are_answered_naming_the_bmc_and_stop_no_node = \
    odd_systems.test_odd_systems_are_answered_naming_the_bmc_and_stop_no_node
test_odd_raid_resources_fail_the_step_naming_the_bmc = \
    odd_storage.test_odd_raid_resources_fail_the_step_naming_the_bmc
test_odd_managers_and_virtual_media_are_answered_naming_the_bmc = \
    odd_vmedia.test_odd_managers_and_virtual_media_are_answered_naming_the_bmc
test_odd_updates_and_bios_settings_fail_their_step_naming_the_bmc = \
    odd_updates.test_odd_updates_and_bios_settings_fail_their_step_naming_the_bmc
test_odd_chassis_leave_out_what_cannot_be_read = \
    odd_chassis.test_odd_chassis_leave_out_what_cannot_be_read
