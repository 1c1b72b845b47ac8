"""tools/bench-fleet at a small size, for correctness only: 50 nodes, 40
redfish on simulated BMCs (one port each) and 10 ipmi on pyghmi's BMC
server (dropping 5% of the session set-up packets, as a lossy network
would), are enrolled and managed, 40 of them (``--lifecycle-nodes``) go
on with simulated agents through inspection (the agent's inventory),
cleaning, deployment, a short steady state beside the 10 left manageable
(the readers listing 30 more, ``--list-nodes``, parked where no
conductor serves them), and undeployment on baremetal-api and one
baremetal-conductor over RabbitMQ and PostgreSQL; once as it is, once
with fast track (the agent booted for the inspection stays up for the
cleaning and the deployment, its parked nodes copies of one made in
the database, ``--parked-by-copy``).  Nothing fails,
nothing is stuck, every node reaches every phase's state, and the
doubles saw what the protocols say they should.  No timing is
asserted: the figures are printed."""

import json
import os
import subprocess
import sys

import pytest

from tests import services

TOOL = os.path.join(os.path.dirname(__file__), '..', '..', 'tools',
                    'bench-fleet')
NODES = 50
IPMI = 10           # of the 50
IPMI_DROP = 0.05    # of their login packets
LIFECYCLE = 40      # the other 10 stay manageable
LISTED = 80         # 30 parked nodes more in the lists


def _run(tmp_path, *args) -> dict:
    """The tool with ``args`` and the small fleet's pace (short
    intervals, quick agents, small database pools: the shared database
    servers limit connections); its result, once nothing failed and
    nothing is stuck."""
    out = tmp_path / 'fleet.json'
    run = subprocess.run(
        [sys.executable, TOOL, *args, '--power-sync-interval', '3',
         '--step-poll-interval', '1', '--heartbeat-seconds', '5',
         '--metal3-interval', '4', '--nova-interval', '2',
         '--agent-command-seconds', '0.5', '--agent-boot-seconds', '0.5',
         '--db-pool', '3', '--phase-timeout', '240', '--json', str(out)],
        capture_output=True, text=True, timeout=900)
    print(run.stdout[-3000:])
    assert out.exists(), run.stdout[-5000:] + run.stderr[-10000:]
    result = json.loads(out.read_text())
    assert (result['failures'], result['stuck']) == (0, 0), (
        result['failure_samples'], result['stuck_samples'],
        run.stderr[-5000:])
    assert run.returncode == 0, run.stderr[-5000:]
    return result


@pytest.mark.parametrize('fast_track, db', [
    (False, 'postgresql'), (True, 'postgresql'), (False, 'mysql')],
    ids=['reboots', 'fast-track', 'mariadb'])
def test_fleet_of_50_redfish_nodes_through_their_life(tmp_path,
                                                       fast_track, db):
    db_url = {'postgresql': services.postgresql_url,
              'mysql': services.mysql_url}[db]()
    rabbit = services.rabbit_url()
    result = _run(
        tmp_path, '--nodes', str(NODES), '--conductors', '1',
        # the fast-track run makes its parked nodes as copies of one
        # (--parked-by-copy); the other enrolls each through the API
        *(['--fast-track', '--parked-by-copy'] if fast_track else []),
        '--ipmi-nodes', str(IPMI), '--ipmi-drop', str(IPMI_DROP),
        '--lifecycle-nodes', str(LIFECYCLE), '--list-nodes', str(LISTED),
        '--db-url', db_url, '--transport-url', rabbit,
        '--steady-seconds', '8')
    assert result['counts'] == {'enrolled': NODES, 'manage': NODES,
                                'inspect': LIFECYCLE, 'clean': LIFECYCLE,
                                'deploy': LIFECYCLE,
                                'undeploy': LIFECYCLE}, result['counts']
    assert (result['ipmi_nodes'], result['ipmi_drop']) == (IPMI, IPMI_DROP)
    # inspection: every node's properties from its inventory, and a port
    # for the NIC it found besides the enrolled one
    assert result['phases']['inspect']['checked'] == {
        'nodes': LIFECYCLE, 'ports': 2 * LIFECYCLE}
    assert result['listed_nodes'] == LISTED
    assert result['phases']['enroll_parked']['nodes'] == LISTED - NODES
    if fast_track:
        assert result['phases']['enroll_parked']['copied'] == \
            LISTED - NODES - 1
    # every BMC request was one the double serves
    assert result['bmc_unserved'] == {}, result['bmc_unserved']
    assert result['bmc_injected_errors'] == 0
    # tasks (verify, deploy) and the power sync never meet at one BMC
    assert result['bmc_max_concurrent_per_bmc'] == 1, result
    agents = result['agents']
    assert agents['heartbeat_errors'] == 0, result['agent_errors']
    # every heartbeat's answer counted by its status; most accepted
    statuses = agents['heartbeat_statuses']
    assert sum(statuses.values()) == agents['heartbeats'], agents
    assert statuses.get('202', 0) >= LIFECYCLE, agents
    assert result['agent_errors'] == []
    # the deployed disk booted once per node; the ramdisk came up for
    # cleaning, deployment and cleaning again (lookups: at least three
    # per node); with fast track the agent booted for the inspection
    # looked up and stayed up for the cleaning and the deployment (two
    # per node: after the inspection, and the undeploy's cleaning); the
    # agents ran the steps
    assert agents['instance_boots'] == LIFECYCLE
    looked_up = agents['lookups'] - agents['lookups_retried']
    if fast_track:
        assert 2 * LIFECYCLE <= looked_up < 3 * LIFECYCLE, agents
    else:
        assert looked_up >= 3 * LIFECYCLE, agents
    assert result['fast_track'] is fast_track
    assert agents['commands'] >= 3 * LIFECYCLE
    assert agents['inventories'] - agents['inventories_retried'] == \
        LIFECYCLE
    steady = result['phases']['steady']
    # the power sync read the systems; both readers ran
    assert steady['bmc_requests_by_kind'].get('GET /Systems/{}', 0) > 0
    assert steady['metal3_gets'] > 0 and steady['nova_lists'] > 0
    # the reader's decoding is a part of its list (of 80 nodes it may
    # round to 0.000 s on a fast machine)
    assert isinstance(steady['nova_list_decode_p50_seconds'], float)
    assert 0 <= steady['nova_list_decode_p50_seconds'] <= \
        steady['nova_list_p50_seconds'], steady
    # the rest of each list, the service's answers, is not nothing
    assert 0 < steady['nova_list_service_p50_seconds'] <= \
        steady['nova_list_seconds'], steady
    # its garbage collector's time is a part of the list too (each at
    # most that list's time)
    assert isinstance(steady['nova_list_gc_p50_seconds'], float)
    assert 0 <= steady['nova_list_gc_p50_seconds'] <= \
        steady['nova_list_p50_seconds'], steady
    assert set(steady['cpu_percent']) == {'api', 'cond-0'}
    # the database's transactions and its server's CPU, on either
    assert steady['db_commits_per_node_per_minute'] > 0, steady
    server = {'postgresql': 'postgresql', 'mysql': 'mariadb'}[db]
    assert set(result['phases']['manage']['cpu_ms_per_node']) == {
        'api', 'cond-0', server}, result['phases']['manage']
    # the API's read-ahead counts, from its /metrics (the lists here
    # are one page: nothing read ahead)
    ahead = steady['list_read_ahead_pages']
    assert set(ahead) == {'read', 'used', 'stale', 'unused', 'failed'}, \
        steady
    assert ahead['read'] >= ahead['used'] + ahead['stale'] >= 0, steady
    # the IPMI nodes were read too, a Get Chassis Status each (no Get
    # Device ID before it)
    assert steady['ipmi_power_reads_per_node_per_minute'] > 0
    assert steady['ipmi_commands_by_kind'].get('00/01', 0) > 0
    assert '06/01' not in steady['ipmi_commands_by_kind'], steady


def test_fleet_loses_a_conductor_mid_deployment(tmp_path):
    """``--lose-conductor deploy``: two conductors share 30 redfish
    nodes; the one holding most is killed (SIGKILL) a second into their
    deployment.  Its nodes waiting on their agents go on with the other
    conductor; those it was deploying fail (as the failures guide says)
    and are deployed again the operator's way (``deleted``, the instance
    set again, ``active``); every node ends deployed, then undeployed,
    none stuck or left the lost conductor's."""
    nodes = 30
    result = _run(
        tmp_path, '--nodes', str(nodes), '--conductors', '2',
        '--lose-conductor', 'deploy', '--lose-after', '1',
        '--conductor-heartbeat-timeout', '10',
        '--db-url', services.postgresql_url(),
        '--transport-url', services.rabbit_url(), '--steady-seconds', '3')
    # the lost conductor's failed nodes counted once brought back
    assert result['counts'] == {p: nodes for p in (
        'enrolled', 'manage', 'inspect', 'clean', 'deploy',
        'undeploy')}, result['counts']
    loss = result['conductor_loss']
    assert loss['phase'] == 'deploy' and loss['victim'] in (
        'cond-0', 'cond-1'), loss
    assert loss['held'] > 0 and sum(loss['held_states'].values()) == \
        loss['held'], loss
    assert loss['recovered'] == loss['lost'] <= loss['held'], loss
    assert set(loss['lost_states']) <= {'deploy failed'}, loss
    assert loss['takeover_seconds'] > 0, loss
    deploy = result['phases']['deploy']
    assert deploy['nodes'] + deploy['recovered'] == nodes, deploy
    if loss['lost']:
        assert result['phases']['deploy.again.active']['nodes'] == \
            loss['lost'], result['phases']
    # the steady state ran on the conductor left
    steady = result['phases']['steady']
    assert set(steady['cpu_percent']) == {'api', 'cond-0', 'cond-1'} - {
        loss['victim']}, steady
