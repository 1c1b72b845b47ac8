"""The exception hierarchy.

One base class with a message template; a few categories under it that
``api/errors.py`` maps to HTTP statuses; specific errors subclass one.
"""


class BaremetalException(Exception):
    """Base class: ``_msg_fmt`` is filled from keyword arguments."""

    _msg_fmt = 'An unknown error occurred.'
    code = 500

    def __init__(self, message: str | None = None, **kwargs):
        self.kwargs = kwargs
        if message is None:
            try:
                message = self._msg_fmt % kwargs
            except (KeyError, TypeError):
                message = self._msg_fmt
        self.message = str(message)
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message


# ---- categories (the API maps these to HTTP statuses) ----

class Invalid(BaremetalException):
    _msg_fmt = 'Invalid input: %(reason)s'
    code = 400


class NotAuthorized(BaremetalException):
    _msg_fmt = 'Not authorized.'
    code = 403


class NotFound(BaremetalException):
    _msg_fmt = 'Resource could not be found.'
    code = 404


class NotAcceptable(BaremetalException):
    _msg_fmt = 'Request not acceptable: %(reason)s'
    code = 406


class MethodNotAllowed(BaremetalException):
    """A method the requested API version does not offer."""
    _msg_fmt = 'Method not allowed: %(reason)s'


class Conflict(BaremetalException):
    _msg_fmt = 'Conflict: %(reason)s'
    code = 409


class TooLarge(BaremetalException):
    _msg_fmt = 'Request entity too large: %(reason)s'
    code = 413


class TemporaryFailure(BaremetalException):
    _msg_fmt = 'Resource temporarily unavailable: %(reason)s'
    code = 503
    # seconds a client should wait before trying again (Retry-After)
    retry_after = 5


class NotImplementedByDriver(BaremetalException):
    _msg_fmt = '%(reason)s'
    code = 400


# ---- specific errors ----

class InvalidParameterValue(Invalid):
    _msg_fmt = '%(err)s'


class MissingParameterValue(Invalid):
    _msg_fmt = '%(err)s'


class InvalidStateRequested(Invalid):
    _msg_fmt = ('The requested action "%(action)s" can not be performed '
                'on node "%(node)s" while it is in state "%(state)s".')


class InvalidUUID(Invalid):
    _msg_fmt = 'Expected a UUID but received %(uuid)s.'


class InvalidName(Invalid):
    _msg_fmt = 'Expected a logical name but received %(name)s.'


class PatchError(Invalid):
    _msg_fmt = "Couldn't apply patch '%(patch)s'. Reason: %(reason)s"


class UnsupportedDriverExtension(Invalid):
    _msg_fmt = ('Driver %(driver)s does not support %(extension)s '
                '(disabled or not implemented).')


class InterfaceNotFoundInEntrypoint(Invalid):
    _msg_fmt = ('Could not find the following interface in the '
                "'%(entrypoint)s' entrypoint: %(iface)s. Valid interfaces "
                'are %(valid)s.')


class IncompatibleInterface(Invalid):
    _msg_fmt = ('%(interface_type)s interface implementation '
                "'%(interface_impl)s' is not supported by hardware type "
                '%(hardware_type)s.')


class NoValidDefaultForInterface(Invalid):
    _msg_fmt = ('No valid default %(interface_type)s interface found for '
                '%(node_info)s: none of %(hardware_type)s supported '
                'interfaces is enabled.')


class InvalidStepArgs(Invalid):
    _msg_fmt = '%(reason)s'


class NodeInMaintenance(Invalid):
    _msg_fmt = ('The %(op)s operation can\'t be performed on node '
                '%(node)s because it\'s in maintenance mode.')


class PowerStateFailure(Invalid):
    _msg_fmt = 'Failed to set node power state to %(pstate)s.'


class NodeProtected(NotAuthorized):
    _msg_fmt = ('Node %(node)s is protected and cannot be undeployed, '
                'rebuilt or deleted')


class NodeNotFound(NotFound):
    _msg_fmt = 'Node %(node)s could not be found.'


class PortNotFound(NotFound):
    _msg_fmt = 'Port %(port)s could not be found.'


class PortgroupNotFound(NotFound):
    _msg_fmt = 'Portgroup %(portgroup)s could not be found.'


class ChassisNotFound(NotFound):
    _msg_fmt = 'Chassis %(chassis)s could not be found.'


class ConductorNotFound(NotFound):
    _msg_fmt = 'Conductor %(conductor)s could not be found.'


class DriverNotFound(NotFound):
    _msg_fmt = ('Could not find the following driver(s) or hardware '
                'type(s): %(driver_name)s.')


class AllocationNotFound(NotFound):
    _msg_fmt = 'Allocation %(allocation)s could not be found.'


class DeployTemplateNotFound(NotFound):
    _msg_fmt = 'Deploy template %(template)s could not be found.'


class RunbookNotFound(NotFound):
    _msg_fmt = 'Runbook %(runbook)s could not be found.'


class InspectionRuleNotFound(NotFound):
    _msg_fmt = 'Rule %(rule)s could not be found.'


class VolumeConnectorNotFound(NotFound):
    _msg_fmt = 'Volume connector %(connector)s could not be found.'


class VolumeTargetNotFound(NotFound):
    _msg_fmt = 'Volume target %(target)s could not be found.'


class NodeTraitNotFound(NotFound):
    _msg_fmt = 'Node %(node_id)s doesn\'t have a trait %(trait)s'


class VifNotAttached(NotFound):
    _msg_fmt = ('Unable to detach VIF %(vif)s from node %(node)s because '
                'it is not attached to it.')


class ResourceNotFound(NotFound):
    _msg_fmt = 'The resource could not be found.'


class NodeLocked(Conflict):
    _msg_fmt = ('Node %(node)s is locked by host %(host)s, please retry '
                'after the current operation is completed.')


class NodeAssociated(Conflict):
    _msg_fmt = ('Node %(node)s is associated with instance %(instance)s.')


class InstanceAssociated(Conflict):
    _msg_fmt = ('Instance %(instance_uuid)s is already associated with a '
                'node, it cannot be associated with this other node '
                '%(node)s')


class DuplicateName(Conflict):
    _msg_fmt = 'A node with name %(name)s already exists.'


class NodeAlreadyExists(Conflict):
    _msg_fmt = 'A node with UUID %(uuid)s already exists.'


class MACAlreadyExists(Conflict):
    _msg_fmt = 'A port with MAC address %(mac)s already exists.'


class ResourceAlreadyExists(Conflict):
    _msg_fmt = '%(what)s already exists.'


class VolumeConnectorAlreadyExists(Conflict):
    _msg_fmt = ('A volume connector of type %(type)s with connector_id '
                '%(connector_id)s already exists.')


class VolumeTargetAlreadyExists(Conflict):
    _msg_fmt = ('A volume target with boot_index %(boot_index)s already '
                'exists on this node.')


class InspectionRuleAlreadyExists(Conflict):
    _msg_fmt = 'A rule with UUID %(uuid)s already exists.'


class InvalidState(Conflict):
    _msg_fmt = '%(reason)s'


class PowerOffDisabled(InvalidState):
    _msg_fmt = ('Failed to set node power state to %(pstate)s: node '
                '%(node)s has disable_power_off set')


class NodeNotRetirable(Conflict):
    _msg_fmt = ('Node %(node)s cannot be retired while in state '
                '"%(state)s"; move it to "manageable" first.')


class ConductorAlreadyRegistered(Conflict):
    _msg_fmt = 'Conductor %(conductor)s already registered.'


class NoFreeConductorWorker(TemporaryFailure):
    _msg_fmt = ('Requested action cannot be performed due to lack of free '
                'conductor workers.')


class NoValidHost(TemporaryFailure):
    _msg_fmt = '%(reason)s'


class DatabaseUnavailable(TemporaryFailure):
    _msg_fmt = ('The database cannot be reached (%(reason)s); the request '
                'was not carried out, try again shortly')


class HardwareInspectionFailure(BaremetalException):
    """Inspection found the machine unacceptable (an inspection rule's
    ``fail`` action); the node goes to ``inspect failed``."""
    _msg_fmt = 'Failed to inspect hardware. Reason: %(error)s'


class InspectionRuleFailed(BaremetalException):
    """A condition or action of an inspection rule could not run."""
    _msg_fmt = 'Failed to apply rule %(rule)s to node %(node)s: %(error)s'


class HardwareError(BaremetalException):
    """A BMC or device failed; the conductor turns it into last_error."""

    _msg_fmt = '%(reason)s'
    # the BMC itself is unreachable, silent or failing (not just this
    # request): the power sync backs off from it
    bmc_unavailable = False


class IPMIFailure(HardwareError):
    _msg_fmt = 'IPMI call failed: %(cmd)s.'


class RedfishError(HardwareError):
    _msg_fmt = 'Redfish exception occurred. Error: %(error)s'


class RedfishConnectionError(RedfishError):
    _msg_fmt = 'Redfish connection failed for node %(node)s: %(error)s'
    bmc_unavailable = True


class RedfishServerError(RedfishError):
    """The BMC answered with a server error (5xx)."""
    bmc_unavailable = True


class RedfishTaskGone(RedfishError):
    """The BMC answers 404 for a task monitor it gave (a BMC that
    restarted, or dropped a finished task)."""


class RedfishSubscriptionNotFound(NotFound):
    _msg_fmt = ('Redfish delete_subscription failed for subscription '
                '%(id)s on node %(node)s. Error: %(error)s')


class BMCConnectionError(HardwareError):
    _msg_fmt = 'Cannot reach the BMC of node %(node)s: %(error)s'
    bmc_unavailable = True


class StepConflict(BaremetalException):
    """Two steps of one interface share a priority: refuse to start."""

    _msg_fmt = '%(reason)s'


class DriverLoadError(BaremetalException):
    _msg_fmt = ('Driver, hardware type or interface %(driver)s could not '
                'be loaded. Reason: %(reason)s.')


class ConfigInvalid(BaremetalException):
    _msg_fmt = 'Invalid configuration: %(error_msg)s'


class CatalogNotFound(BaremetalException):
    _msg_fmt = 'Not found.'


class NodeIsRetired(Conflict):
    _msg_fmt = ('The %(op)s operation can\'t be performed on node '
                '%(node)s because it is retired; unset "retired" first.')


class NotAuthenticated(BaremetalException):
    _msg_fmt = 'Authentication required.'
    code = 401


class StepsNotReady(BaremetalException):
    """A driver cannot list its steps right now (e.g. they come from an
    agent that has not reported yet)."""

    _msg_fmt = ('The steps of node %(node)s are not known yet; retry in '
                '%(retry_after)s seconds.')


class AgentTokenInvalid(NotAuthenticated):
    _msg_fmt = ('Invalid or missing agent token for node %(node)s: '
                '%(reason)s')


class AgentTokenInTransit(Conflict):
    _msg_fmt = ('The agent token of node %(node)s was handed out to an '
                'earlier lookup of this boot, and no heartbeat has carried '
                'it yet. If that lookup\'s answer was lost, look up again '
                'later: a token no heartbeat carries is replaced.')


# ---- the agent on a node (ironic-python-agent) ----

class AgentError(BaremetalException):
    """A command the conductor sent the agent failed, or the agent gave
    an answer that makes no sense."""

    _msg_fmt = ('Agent on node %(node)s: %(command)s failed: '
                '%(error)s')


class AgentConnectionFailed(AgentError):
    _msg_fmt = ('Agent on node %(node)s cannot be reached at %(url)s '
                '(%(command)s): %(error)s')


class AgentNotReady(AgentError):
    """The node has no agent on record (it never heartbeated this
    boot)."""

    _msg_fmt = ('Node %(node)s has no running agent on record: '
                '%(reason)s')


class AdoptedCommandFailed(AgentError):
    """A command a conductor lost since had sent for the current step,
    waited for by its successor, failed: it may have failed for want of
    the lost conductor (an image on its file server), so the step is run
    again once, its command this conductor's (conductor/
    step_polling.py)."""


class ImageDownloadFailed(BaremetalException):
    _msg_fmt = 'Failed to fetch %(url)s: %(reason)s'


class ImageChecksumError(ImageDownloadFailed):
    _msg_fmt = ('The checksum of %(url)s does not match: expected '
                '%(algo)s %(expected)s, got %(actual)s')


class GlanceImageUnusable(Invalid):
    """A Glance image a node cannot be deployed with: unknown, not
    active, not the project's, of a format the agent cannot write."""

    _msg_fmt = 'Glance image %(image)s cannot be deployed: %(reason)s'


class GlanceUnavailable(Invalid):
    _msg_fmt = ('The Image service (Glance) could not be asked about '
                'image %(image)s: %(reason)s')
