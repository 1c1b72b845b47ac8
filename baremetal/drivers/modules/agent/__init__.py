"""Drivers that work through ironic-python-agent on the machine."""
