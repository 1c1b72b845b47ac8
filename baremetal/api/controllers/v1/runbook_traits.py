"""/v1/runbooks/{runbook}/traits (API 1.112): the traits that let a
runbook run on a node.  A node may use a runbook when it has at least
one of the runbook's traits (before 1.112: a trait of the runbook's
name).  Trait names follow the node traits' rule (common/traits.py)."""

from baremetal.api import policy
from baremetal.api import versions
from baremetal.api.controllers.v1 import runbooks
from baremetal.api.routing import route
from baremetal.common import exception
from baremetal.common import traits
from baremetal.db import runbooks as db_runbooks

_ONE_OR_ALL = ('A single runbook trait may be added via PUT '
               '/v1/runbooks/<runbook identifier>/traits/<trait> with no '
               'body, or all runbook traits may be replaced via PUT '
               '/v1/runbooks/<runbook identifier>/traits with the list of '
               'traits specified in the request body.')


def _check(trait) -> None:
    if not traits.is_valid(trait):
        raise exception.InvalidParameterValue(err=traits.describe(trait))


def _runbook(req, runbook: str, rule: str) -> dict:
    row = runbooks.RES.get_row(req, runbook)
    if rule != 'baremetal:runbook:get':
        policy.authorize(req, rule)
    return row


@route('GET', '/v1/runbooks/{runbook}/traits',
       min_version=versions.RUNBOOK_TRAITS)
def list_traits(req, runbook):
    row = _runbook(req, runbook, 'baremetal:runbook:get')
    return {'traits': db_runbooks.traits_of([row['id']]).get(row['id'],
                                                              [])}


@route('PUT', '/v1/runbooks/{runbook}/traits', status=204,
       min_version=versions.RUNBOOK_TRAITS)
def set_traits(req, runbook):
    """Replace every trait with the body's ``traits`` list."""
    body = req.json_object(optional=True)
    unknown = set(body) - {'traits'}
    if unknown:
        raise exception.InvalidParameterValue(
            err='Unknown attribute(s) for runbook traits: %s'
            % ', '.join(sorted(unknown)))
    if 'traits' not in body:
        raise exception.InvalidParameterValue(err=_ONE_OR_ALL)
    wanted = body['traits']
    if not isinstance(wanted, list):
        raise exception.InvalidParameterValue(
            err='"traits" must be a list')
    for t in wanted:
        _check(t)
    row = _runbook(req, runbook, 'baremetal:runbook:update')
    db_runbooks.set_traits(row['id'], wanted)
    return None


@route('PUT', '/v1/runbooks/{runbook}/traits/{trait}', status=204,
       min_version=versions.RUNBOOK_TRAITS)
def add_trait(req, runbook, trait):
    _check(trait)
    if req.json() is not None:
        raise exception.InvalidParameterValue(
            err='No body should be provided when adding a trait')
    row = _runbook(req, runbook, 'baremetal:runbook:update')
    db_runbooks.add_trait(row['id'], trait)
    req.response_headers['Location'] = req.link(
        'runbooks', runbook, 'traits', trait)['href']
    return None


@route('DELETE', '/v1/runbooks/{runbook}/traits', status=204,
       min_version=versions.RUNBOOK_TRAITS)
def delete_traits(req, runbook):
    row = _runbook(req, runbook, 'baremetal:runbook:update')
    db_runbooks.set_traits(row['id'], [])
    return None


@route('DELETE', '/v1/runbooks/{runbook}/traits/{trait}', status=204,
       min_version=versions.RUNBOOK_TRAITS)
def delete_trait(req, runbook, trait):
    """Removing a trait the runbook does not have does nothing (as
    Ironic; a node's missing trait is a 404)."""
    row = _runbook(req, runbook, 'baremetal:runbook:update')
    db_runbooks.delete_trait(row['id'], trait)
    return None
