"""The schema the alembic migrations build, as SQLAlchemy Core tables.

Tables are written as classes (one attribute per column) for
readability; ``Base`` turns each into a ``Table`` of one ``MetaData``.
Nothing uses the ORM, so it is not loaded (~0.1 s of start-up).
"""

import json

import orjson

import sqlalchemy as sa
from sqlalchemy import types
from sqlalchemy.dialects import mysql

from baremetal.common import storable
from baremetal.conf import default as default_conf


class JSONText(types.TypeDecorator):
    """A JSON document stored as text (portable across every backend);
    LONGTEXT on MySQL and MariaDB, whose TEXT holds 64 KB (a config drive
    in instance_info, an agent's inventory may be larger)."""

    impl = sa.Text
    cache_ok = True

    def load_dialect_impl(self, dialect):
        if dialect.name in ('mysql', 'mariadb'):
            return dialect.type_descriptor(mysql.LONGTEXT())
        return dialect.type_descriptor(sa.Text())

    def process_bind_param(self, value, dialect):
        if value is None:
            return None
        try:
            return orjson.dumps(value).decode()
        except TypeError:
            # what orjson refuses: a lone surrogate (written as its
            # escape: neither orjson nor PostgreSQL reads one back), an
            # integer beyond 64 bits (the json module takes it)
            return json.dumps(storable.deep(value), separators=(',', ':'))

    def process_result_value(self, value, dialect):
        if value is None:
            return None
        return orjson.loads(value)


class Base:
    """Subclasses become Core tables: ``__tablename__``, columns as
    attributes (named after them, in the order written) and
    ``__table_args__`` (constraints, indexes); ``__table__`` is the
    Table."""

    metadata = sa.MetaData()

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        columns = []
        for name, value in list(vars(cls).items()):
            if isinstance(value, sa.Column):
                if value.name is None:
                    value.name = value.key = name
                columns.append(value)
        args = getattr(cls, '__table_args__', ())
        # a trailing dict: the Table's keyword arguments
        kwargs = args[-1] if args and isinstance(args[-1], dict) else {}
        if kwargs:
            args = args[:-1]
        cls.__table__ = sa.Table(cls.__tablename__, Base.metadata,
                                 *columns, *args, **kwargs)


PRECISE_DATETIME = sa.DateTime().with_variant(
    mysql.DATETIME(fsp=6), 'mysql', 'mariadb')


def _ts():
    return (sa.Column('created_at', sa.DateTime),
            sa.Column('updated_at', sa.DateTime))


INTERFACE_COLUMNS = tuple('%s_interface' % i
                          for i in default_conf.INTERFACE_TYPES)


class Conductor(Base):
    __tablename__ = 'conductors'
    __table_args__ = (sa.UniqueConstraint('hostname',
                                          name='uniq_conductors0hostname'),)
    id = sa.Column(sa.Integer, primary_key=True)
    hostname = sa.Column(sa.String(255), nullable=False)
    drivers = sa.Column(JSONText)
    online = sa.Column(sa.Boolean, default=True, nullable=False)
    conductor_group = sa.Column(sa.String(255), nullable=False,
                                server_default='', default='')
    created_at = sa.Column(sa.DateTime)
    updated_at = sa.Column(sa.DateTime)


class ConductorHardwareInterface(Base):
    __tablename__ = 'conductor_hardware_interfaces'
    __table_args__ = (
        sa.UniqueConstraint('conductor_id', 'hardware_type',
                            'interface_type', 'interface_name',
                            name='uniq_conductorhwifaces0'),)
    id = sa.Column(sa.Integer, primary_key=True)
    conductor_id = sa.Column(sa.Integer, sa.ForeignKey('conductors.id'),
                             nullable=False)
    hardware_type = sa.Column(sa.String(255), nullable=False)
    interface_type = sa.Column(sa.String(16), nullable=False)
    interface_name = sa.Column(sa.String(255), nullable=False)
    default = sa.Column(sa.Boolean, default=False, nullable=False)
    created_at = sa.Column(sa.DateTime)
    updated_at = sa.Column(sa.DateTime)


class Chassis(Base):
    __tablename__ = 'chassis'
    __table_args__ = (sa.UniqueConstraint('uuid', name='uniq_chassis0uuid'),)
    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False)
    description = sa.Column(sa.String(255))
    extra = sa.Column(JSONText)
    created_at = sa.Column(sa.DateTime)
    updated_at = sa.Column(sa.DateTime)


class Node(Base):
    __tablename__ = 'nodes'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_nodes0uuid'),
        sa.UniqueConstraint('name', name='uniq_nodes0name'),
        sa.UniqueConstraint('instance_uuid', name='uniq_nodes0instance_uuid'),
        sa.Index('nodes_provision_state_idx', 'provision_state'),
        sa.Index('nodes_driver_idx', 'driver'),
        # PostgreSQL: the reserved nodes only (migration 0009)
        sa.Index('nodes_reservation_idx', 'reservation',
                 postgresql_where=sa.text('reservation IS NOT NULL')),
        sa.Index('nodes_conductor_group_idx', 'conductor_group'),
        sa.Index('nodes_shard_idx', 'shard'),
        sa.Index('nodes_instance_name_idx', 'instance_name'),
        sa.Index('nodes_parent_node_idx', 'parent_node'),
        sa.Index('nodes_resource_class_idx', 'resource_class'),
        sa.Index('nodes_owner_idx', 'owner'),
        sa.Index('nodes_lessee_idx', 'lessee'),
        sa.Index('nodes_maintenance_idx', 'maintenance'),
        sa.Index('nodes_fault_idx', 'fault'),
        sa.Index('nodes_chassis_id_idx', 'chassis_id'),
        sa.Index('nodes_conductor_affinity_idx', 'conductor_affinity'),
        sa.Index('nodes_provision_updated_at_idx', 'provision_updated_at'),
    )
    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False)
    name = sa.Column(sa.String(255))
    description = sa.Column(sa.Text)
    chassis_id = sa.Column(sa.Integer, sa.ForeignKey('chassis.id'))
    driver = sa.Column(sa.String(255), nullable=False)
    bios_interface = sa.Column(sa.String(255))
    firmware_interface = sa.Column(sa.String(255))
    boot_interface = sa.Column(sa.String(255))
    console_interface = sa.Column(sa.String(255))
    deploy_interface = sa.Column(sa.String(255))
    inspect_interface = sa.Column(sa.String(255))
    management_interface = sa.Column(sa.String(255))
    network_interface = sa.Column(sa.String(255))
    power_interface = sa.Column(sa.String(255))
    raid_interface = sa.Column(sa.String(255))
    rescue_interface = sa.Column(sa.String(255))
    storage_interface = sa.Column(sa.String(255))
    vendor_interface = sa.Column(sa.String(255))
    provision_state = sa.Column(sa.String(15))
    target_provision_state = sa.Column(sa.String(15))
    provision_updated_at = sa.Column(sa.DateTime)
    power_state = sa.Column(sa.String(15))
    target_power_state = sa.Column(sa.String(15))
    maintenance = sa.Column(sa.Boolean, default=False, nullable=False)
    maintenance_reason = sa.Column(sa.Text)
    fault = sa.Column(sa.String(255))
    last_error = sa.Column(sa.Text)
    reservation = sa.Column(sa.String(255))
    conductor_affinity = sa.Column(sa.Integer)
    conductor_group = sa.Column(sa.String(255), nullable=False,
                                server_default='', default='')
    console_enabled = sa.Column(sa.Boolean, default=False, nullable=False)
    driver_info = sa.Column(JSONText)
    driver_internal_info = sa.Column(JSONText)
    instance_info = sa.Column(JSONText)
    instance_uuid = sa.Column(sa.String(36))
    instance_name = sa.Column(sa.String(255))
    properties = sa.Column(JSONText)
    extra = sa.Column(JSONText)
    clean_step = sa.Column(JSONText)
    deploy_step = sa.Column(JSONText)
    raid_config = sa.Column(JSONText)
    target_raid_config = sa.Column(JSONText)
    resource_class = sa.Column(sa.String(80))
    inspection_started_at = sa.Column(sa.DateTime)
    inspection_finished_at = sa.Column(sa.DateTime)
    automated_clean = sa.Column(sa.Boolean)
    protected = sa.Column(sa.Boolean, default=False, nullable=False)
    protected_reason = sa.Column(sa.Text)
    owner = sa.Column(sa.String(255))
    lessee = sa.Column(sa.String(255))
    allocation_id = sa.Column(sa.Integer)
    retired = sa.Column(sa.Boolean, default=False, server_default=sa.false())
    retired_reason = sa.Column(sa.Text)
    network_data = sa.Column(JSONText)
    boot_mode = sa.Column(sa.String(16))
    secure_boot = sa.Column(sa.Boolean)
    shard = sa.Column(sa.String(255))
    parent_node = sa.Column(sa.String(36))
    service_step = sa.Column(JSONText)
    disable_power_off = sa.Column(sa.Boolean, default=False,
                                  server_default=sa.false())
    health = sa.Column(sa.String(32))
    created_at = sa.Column(sa.DateTime)
    # to the microsecond on MySQL/MariaDB too (DATETIME keeps seconds):
    # an API update saves only onto the node as it read it, told by
    # this (objects/node.py)
    updated_at = sa.Column(PRECISE_DATETIME)


class NodeHistory(Base):
    """Events of a node an operator should see (API 1.78)."""
    __tablename__ = 'node_history'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_history0uuid'),
        sa.Index('history_node_id_idx', 'node_id'),
    )
    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False)
    node_id = sa.Column(sa.Integer, sa.ForeignKey('nodes.id'),
                        nullable=False)
    conductor = sa.Column(sa.String(255))
    event_type = sa.Column(sa.String(255))
    severity = sa.Column(sa.String(255))
    event = sa.Column(sa.Text)
    user = sa.Column(sa.String(255))
    # API 1.113 and 1.115
    project = sa.Column(sa.String(80))
    state = sa.Column(sa.String(255))
    target_provision_state = sa.Column(sa.String(255))
    duration_seconds = sa.Column(sa.Integer)
    created_at = sa.Column(sa.DateTime)
    updated_at = sa.Column(sa.DateTime)


class NodeInventory(Base):
    """What inspection found on a node (API 1.81)."""
    __tablename__ = 'node_inventory'
    __table_args__ = (
        sa.UniqueConstraint('node_id', name='uniq_inventory0node_id'),
    )
    id = sa.Column(sa.Integer, primary_key=True)
    node_id = sa.Column(sa.Integer, sa.ForeignKey('nodes.id'),
                        nullable=False)
    inventory_data = sa.Column(JSONText)
    plugin_data = sa.Column(JSONText)
    created_at = sa.Column(sa.DateTime)
    updated_at = sa.Column(sa.DateTime)


class FirmwareComponent(Base):
    """A firmware component of a node and its versions (API 1.86)."""
    __tablename__ = 'firmware_information'
    __table_args__ = (
        sa.UniqueConstraint('node_id', 'component',
                            name='uniq_firmware0node_id0component'),
    )
    id = sa.Column(sa.Integer, primary_key=True)
    node_id = sa.Column(sa.Integer, sa.ForeignKey('nodes.id'),
                        nullable=False)
    component = sa.Column(sa.String(255), nullable=False)
    initial_version = sa.Column(sa.String(255), nullable=False)
    current_version = sa.Column(sa.String(255))
    last_version_flashed = sa.Column(sa.String(255))
    # API 1.114
    vendor = sa.Column(sa.String(255))
    model = sa.Column(sa.String(255))
    serial_number = sa.Column(sa.String(255))
    created_at = sa.Column(sa.DateTime)
    updated_at = sa.Column(sa.DateTime)


class Runbook(Base):
    """A named list of steps for manual cleaning and servicing (API
    1.92)."""
    __tablename__ = 'runbooks'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_runbooks0uuid'),
        sa.UniqueConstraint('name', name='uniq_runbooks0name'),
        sa.Index('runbooks_owner_idx', 'owner'),
    )
    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False)
    name = sa.Column(sa.String(255), nullable=False)
    description = sa.Column(sa.String(255))
    public = sa.Column(sa.Boolean, nullable=False, default=False,
                       server_default=sa.false())
    owner = sa.Column(sa.String(255))
    disable_ramdisk = sa.Column(sa.Boolean, nullable=False, default=False,
                                server_default=sa.false())
    extra = sa.Column(JSONText)
    created_at = sa.Column(sa.DateTime)
    updated_at = sa.Column(sa.DateTime)


class RunbookStep(Base):
    __tablename__ = 'runbook_steps'
    __table_args__ = (
        sa.Index('runbook_steps_runbook_id_idx', 'runbook_id'),
    )
    id = sa.Column(sa.Integer, primary_key=True)
    runbook_id = sa.Column(sa.Integer, sa.ForeignKey('runbooks.id'),
                           nullable=False)
    interface = sa.Column(sa.String(255), nullable=False)
    step = sa.Column(sa.String(255), nullable=False)
    args = sa.Column(JSONText, nullable=False)
    order = sa.Column(sa.Integer, nullable=False)
    created_at = sa.Column(sa.DateTime)
    updated_at = sa.Column(sa.DateTime)


class RunbookTrait(Base):
    """The traits a node needs for a runbook to apply to it (API
    1.112)."""
    __tablename__ = 'runbook_traits'
    runbook_id = sa.Column(sa.Integer, sa.ForeignKey('runbooks.id'),
                           primary_key=True, nullable=False)
    trait = sa.Column(sa.String(255), primary_key=True, nullable=False)
    created_at = sa.Column(sa.DateTime)
    updated_at = sa.Column(sa.DateTime)
    __table_args__ = (sa.Index('runbook_traits_idx', 'trait'),)


class NodeTrait(Base):
    __tablename__ = 'node_traits'
    node_id = sa.Column(sa.Integer, sa.ForeignKey('nodes.id'),
                        primary_key=True, nullable=False)
    trait = sa.Column(sa.String(255), primary_key=True, nullable=False)
    created_at = sa.Column(sa.DateTime)
    updated_at = sa.Column(sa.DateTime)
    __table_args__ = (sa.Index('node_traits_idx', 'trait'),)


class Portgroup(Base):
    __tablename__ = 'portgroups'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_portgroups0uuid'),
        sa.UniqueConstraint('address', name='uniq_portgroups0address'),
        sa.UniqueConstraint('name', name='uniq_portgroups0name'),
        sa.Index('portgroups_node_id_idx', 'node_id'),
    )
    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False)
    name = sa.Column(sa.String(255))
    node_id = sa.Column(sa.Integer, sa.ForeignKey('nodes.id'))
    address = sa.Column(sa.String(18))
    extra = sa.Column(JSONText)
    internal_info = sa.Column(JSONText)
    standalone_ports_supported = sa.Column(sa.Boolean, default=True)
    mode = sa.Column(sa.String(255))
    properties = sa.Column(JSONText)
    physical_network = sa.Column(sa.String(64))
    category = sa.Column(sa.String(80))
    dynamic_portgroup = sa.Column(sa.Boolean, default=False,
                                  server_default=sa.false())
    created_at = sa.Column(sa.DateTime)
    updated_at = sa.Column(sa.DateTime)


class Port(Base):
    __tablename__ = 'ports'
    __table_args__ = (
        sa.UniqueConstraint('address', name='uniq_ports0address'),
        sa.UniqueConstraint('uuid', name='uniq_ports0uuid'),
        sa.Index('ports_node_id_idx', 'node_id'),
        sa.Index('ports_portgroup_id_idx', 'portgroup_id'),
        sa.UniqueConstraint('name', name='uniq_ports0name'),
    )
    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False)
    address = sa.Column(sa.String(18), nullable=False)
    node_id = sa.Column(sa.Integer, sa.ForeignKey('nodes.id'))
    portgroup_id = sa.Column(sa.Integer, sa.ForeignKey('portgroups.id'))
    extra = sa.Column(JSONText)
    local_link_connection = sa.Column(JSONText)
    pxe_enabled = sa.Column(sa.Boolean, default=True)
    internal_info = sa.Column(JSONText)
    physical_network = sa.Column(sa.String(64))
    is_smartnic = sa.Column(sa.Boolean, default=False)
    name = sa.Column(sa.String(255))
    description = sa.Column(sa.String(255))
    vendor = sa.Column(sa.String(32))
    category = sa.Column(sa.String(80))
    available_for_dynamic_portgroup = sa.Column(
        sa.Boolean, nullable=False, default=True, server_default=sa.true())
    created_at = sa.Column(sa.DateTime)
    updated_at = sa.Column(sa.DateTime)


class VolumeConnector(Base):
    __tablename__ = 'volume_connectors'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_volumeconnectors0uuid'),
        sa.UniqueConstraint('type', 'connector_id',
                            name='uniq_volumeconnectors0type0connector_id'),
    )
    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False)
    node_id = sa.Column(sa.Integer, sa.ForeignKey('nodes.id'))
    type = sa.Column(sa.String(32))
    connector_id = sa.Column(sa.String(255))
    extra = sa.Column(JSONText)
    created_at = sa.Column(sa.DateTime)
    updated_at = sa.Column(sa.DateTime)


class VolumeTarget(Base):
    __tablename__ = 'volume_targets'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_volumetargets0uuid'),
        sa.UniqueConstraint('node_id', 'boot_index',
                            name='uniq_volumetargets0node_id0boot_index'),
    )
    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False)
    node_id = sa.Column(sa.Integer, sa.ForeignKey('nodes.id'))
    volume_type = sa.Column(sa.String(64))
    properties = sa.Column(JSONText)
    boot_index = sa.Column(sa.Integer)
    volume_id = sa.Column(sa.String(36))
    extra = sa.Column(JSONText)
    created_at = sa.Column(sa.DateTime)
    updated_at = sa.Column(sa.DateTime)


class BIOSSetting(Base):
    __tablename__ = 'bios_settings'
    node_id = sa.Column(sa.Integer, sa.ForeignKey('nodes.id'),
                        primary_key=True, nullable=False)
    name = sa.Column(sa.String(255), primary_key=True, nullable=False)
    value = sa.Column(sa.Text)
    # the BIOS registry's description of the setting (API 1.74)
    attribute_type = sa.Column(sa.String(255))
    allowable_values = sa.Column(JSONText)
    lower_bound = sa.Column(sa.Integer)
    max_length = sa.Column(sa.Integer)
    min_length = sa.Column(sa.Integer)
    read_only = sa.Column(sa.Boolean)
    reset_required = sa.Column(sa.Boolean)
    unique = sa.Column(sa.Boolean)
    upper_bound = sa.Column(sa.Integer)
    created_at = sa.Column(sa.DateTime)
    updated_at = sa.Column(sa.DateTime)


class Allocation(Base):
    __tablename__ = 'allocations'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_allocations0uuid'),
        sa.UniqueConstraint('name', name='uniq_allocations0name'),
        sa.Index('allocations_state_idx', 'state'),
    )
    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False)
    name = sa.Column(sa.String(255))
    node_id = sa.Column(sa.Integer, sa.ForeignKey('nodes.id'))
    state = sa.Column(sa.String(15), nullable=False)
    owner = sa.Column(sa.String(255))
    last_error = sa.Column(sa.Text)
    resource_class = sa.Column(sa.String(80))
    traits = sa.Column(JSONText)
    candidate_nodes = sa.Column(JSONText)
    extra = sa.Column(JSONText)
    conductor_affinity = sa.Column(sa.Integer)
    created_at = sa.Column(sa.DateTime)
    updated_at = sa.Column(sa.DateTime)


class DeployTemplate(Base):
    __tablename__ = 'deploy_templates'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_deploytemplates0uuid'),
        sa.UniqueConstraint('name', name='uniq_deploytemplates0name'),
    )
    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36))
    name = sa.Column(sa.String(255), nullable=False)
    extra = sa.Column(JSONText)
    created_at = sa.Column(sa.DateTime)
    updated_at = sa.Column(sa.DateTime)


class DeployTemplateStep(Base):
    __tablename__ = 'deploy_template_steps'
    __table_args__ = (
        sa.Index('deploy_template_id', 'deploy_template_id'),
    )
    id = sa.Column(sa.Integer, primary_key=True)
    deploy_template_id = sa.Column(sa.Integer,
                                   sa.ForeignKey('deploy_templates.id'),
                                   nullable=False)
    interface = sa.Column(sa.String(255), nullable=False)
    step = sa.Column(sa.String(255), nullable=False)
    args = sa.Column(JSONText, nullable=False)
    priority = sa.Column(sa.Integer, nullable=False)
    created_at = sa.Column(sa.DateTime)
    updated_at = sa.Column(sa.DateTime)


class InspectionRule(Base):
    """A rule applied to what inspection found (API 1.96)."""
    __tablename__ = 'inspection_rules'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_inspection_rules0uuid'),
        sa.Index('inspection_rule_scope_idx', 'scope'),
        sa.Index('inspection_rule_phase_idx', 'phase'),
    )
    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False)
    priority = sa.Column(sa.Integer, nullable=False, default=0,
                         server_default='0')
    description = sa.Column(sa.String(255))
    scope = sa.Column(sa.String(255))
    sensitive = sa.Column(sa.Boolean, nullable=False, default=False,
                          server_default=sa.false())
    phase = sa.Column(sa.String(16), nullable=False, default='main',
                      server_default='main')
    conditions = sa.Column(JSONText)
    actions = sa.Column(JSONText, nullable=False)
    created_at = sa.Column(sa.DateTime)
    updated_at = sa.Column(sa.DateTime)


class NodeEvent(Base):
    """The change feed (GET /events): one row per change of a tracked
    node field, written in the transaction of the change; ids come from
    ``node_event_counter`` on PostgreSQL and MariaDB (see db/events.py
    for why)."""
    __tablename__ = 'node_events'
    # SQLite hands the ids out itself (one writer at a time): the
    # rowid after the largest, which a purge never deletes (events.py)
    id = sa.Column(sa.BigInteger().with_variant(sa.Integer, 'sqlite'),
                   primary_key=True, autoincrement=False)
    node_uuid = sa.Column(sa.String(36), nullable=False)
    field = sa.Column(sa.String(32), nullable=False)
    old = sa.Column(JSONText)
    new = sa.Column(JSONText)
    detail = sa.Column(JSONText)
    resource_class = sa.Column(sa.String(80))
    conductor_group = sa.Column(sa.String(255))
    owner = sa.Column(sa.String(255))
    lessee = sa.Column(sa.String(255))
    created_at = sa.Column(sa.DateTime, nullable=False)


class NodeEventCounter(Base):
    """One row: the last event id handed out.  Taking the next id
    updates (locks) it until the writing transaction ends."""
    __tablename__ = 'node_event_counter'
    id = sa.Column(sa.Integer, primary_key=True, autoincrement=False)
    last_id = sa.Column(sa.BigInteger, nullable=False)


@sa.event.listens_for(NodeEventCounter.__table__, 'after_create')
def _first_counter_row(target, connection, **kw):
    connection.execute(target.insert().values(id=1, last_id=0))


@sa.event.listens_for(Base.metadata, 'after_create')
def _event_triggers(target, connection, **kw):
    # the node events are written by triggers (db/events.py), created
    # once every table exists
    from baremetal.db import events
    for sql in events.TRIGGERS[connection.dialect.name]:
        connection.exec_driver_sql(sql)


TABLES = Base.metadata.tables
