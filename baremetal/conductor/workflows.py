"""The step workflows (cleaning, deployment, servicing) by the wait
state each pauses in while a step runs asynchronously."""

from baremetal.conductor import cleaning
from baremetal.conductor import deployments
from baremetal.conductor import servicing

KINDS = (cleaning.KIND, deployments.KIND, servicing.KIND)
BY_WAIT_STATE = {k.wait_state: k for k in KINDS}
