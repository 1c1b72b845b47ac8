from baremetal.objects.node import Node  # noqa: F401
from baremetal.objects.node import Port  # noqa: F401
