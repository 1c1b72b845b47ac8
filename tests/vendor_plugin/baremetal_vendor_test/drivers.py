"""Vendor interfaces built only on baremetal's public driver API."""

from baremetal.drivers import base
from baremetal.drivers import hardware_type
from baremetal.drivers.modules import fake
from baremetal.drivers.modules.agent import deploy as agent_deploy


class VendorDeploy(fake.FakeDeploy):
    """Adds a deploy step and a clean step of its own.  Like the fake
    deploy it writes nothing: it runs on the vendor's test hardware
    type, which needs no hardware either."""

    hardware_types = fake.FakeDeploy.hardware_types | {'vendor-hardware'}

    @base.deploy_step(priority=70, argsinfo={
        'mode': {'description': 'How to tune the vendor thing',
                 'required': False}})
    def tune_vendor_firmware(self, task, mode='fast'):
        task.node.driver_internal_info['vendor_tuned'] = mode

    @base.clean_step(priority=5, argsinfo=None)
    def vendor_burn_in(self, task):
        info = task.node.driver_internal_info
        info['vendor_burn_in'] = info.get('vendor_burn_in', 0) + 1


class ConflictingManagement(fake.FakeManagement):
    """Two clean steps with one priority: a conductor must refuse it."""

    @base.clean_step(priority=42)
    def reset_idrac(self, task):
        pass

    @base.clean_step(priority=42)
    def clear_job_queue(self, task):
        pass


class VendorHardware(hardware_type.AbstractHardwareType):
    @property
    def supported_power_interfaces(self):
        return ['fake']

    @property
    def supported_management_interfaces(self):
        return ['fake', 'vendor-conflict']

    @property
    def supported_deploy_interfaces(self):
        return ['vendor-deploy', 'fake']


class VendorAgentDeploy(agent_deploy.RamdiskDeploy):
    """An agent deploy interface with a step of the vendor's own
    hardware manager inside the agent, run in band."""

    @base.clean_step(priority=0, argsinfo={
        'level': {'description': 'How hard to flash', 'required': True}})
    def vendor_flash_nic(self, task, level):
        return self.run_in_band(task, 'clean', task.node.clean_step)


class VendorAgentHardware(hardware_type.AbstractHardwareType):
    """Lists interface classes, as Ironic's hardware types do."""

    @property
    def supported_power_interfaces(self):
        return [fake.FakePower]

    @property
    def supported_management_interfaces(self):
        return [fake.FakeManagement]

    @property
    def supported_boot_interfaces(self):
        return [fake.FakeBoot]

    @property
    def supported_deploy_interfaces(self):
        return [VendorAgentDeploy, agent_deploy.RamdiskDeploy]
