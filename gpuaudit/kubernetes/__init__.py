"""Kubernetes over vSphere: the Kubernetes clusters given with ``scan --kubernetes``.

Three modules, each in the layer of the pipeline it belongs to (docs/architecture.md,
checked by the contracts in .importlinter):

- ``model``: the clusters as plain data, what was read of their nodes and pods and
  what the audit concluded about them. In the inventory's layer: it imports nothing
  of gpuaudit.
- ``simulate``: which VM each node is, and where a lost host's GPU pods go. In the
  simulation's layer: it imports ``model``, the facts and the inventory.
- ``read``: kubectl's JSON, checked with the Kubernetes client's models. Among the
  sources: it imports ``model`` and ``gpuaudit.common.files``, and it is the only module of
  gpuaudit that imports the Kubernetes client (the third-party ``kubernetes``
  package, an optional extra; the absolute ``import kubernetes`` names it, never this
  package).

This file imports none of them, so that importing the model loads neither the
reader nor the simulation.
"""
