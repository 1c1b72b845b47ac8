"""A stand-in for an out-of-tree vendor driver package.

It registers interfaces and a hardware type through baremetal's entry
point groups, exactly as a vendor package would; the test suite installs
it (see test-requirements.txt).
"""

from setuptools import setup

setup(
    name='baremetal-vendor-test',
    version='1.0',
    packages=['baremetal_vendor_test'],
    entry_points={
        'baremetal.hardware.types': [
            'vendor-hardware = baremetal_vendor_test.drivers:VendorHardware',
            'vendor-agent-hardware = '
            'baremetal_vendor_test.drivers:VendorAgentHardware',
        ],
        'baremetal.hardware.interfaces.deploy': [
            'vendor-deploy = baremetal_vendor_test.drivers:VendorDeploy',
            'vendor-agent-deploy = '
            'baremetal_vendor_test.drivers:VendorAgentDeploy',
        ],
        'baremetal.hardware.interfaces.management': [
            'vendor-conflict = '
            'baremetal_vendor_test.drivers:ConflictingManagement',
        ],
    },
)
