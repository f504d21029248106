"""rules/scopes.py: where a finding on each kind of object is located, written out by hand.

healthy() is cluster c1 with hosts h1..h3, each running one vGPU VM (v1 on h1).
"""

from __future__ import annotations

from gpuaudit.rules import scopes
from gpuaudit.rules.registry import Where
from tests.support.builders import context, healthy


def test_a_finding_on_a_vm_is_located_on_its_host_in_its_cluster() -> None:
    e = healthy()
    assert scopes.GPU_VMS.locate(context(e.inv), e.inv.vms[0]) == Where("v1", "c1", "h1")


def test_a_finding_on_a_cluster_is_located_in_that_cluster() -> None:
    e = healthy()
    c1 = e.inv.clusters[0]
    for scope in (scopes.CLUSTERS_WITH_GPU_VMS, scopes.CLUSTERS_WITH_GPUS):
        assert scope.locate(context(e.inv), c1) == Where("c1", "c1", None)
