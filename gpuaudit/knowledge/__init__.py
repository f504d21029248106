"""What NVIDIA and VMware publish, as gpuaudit holds it: facts, never verdicts.

- ``catalog``: the GPU catalogue, PCI ids to boards, and a vGPU profile's board and
  frame buffer;
- ``type_names``: every published form of an NVIDIA vGPU type name, read;
- ``vgpu_types``: NVIDIA's per-type figures, board by board, loaded from the files in
  ``vgpu-types/`` (one YAML file per board, shipped with the package);
- ``branches``: the NVIDIA vGPU software branches and the ESXi releases each lists;
- ``releases``: ESXi and vCenter releases, read from their versions and builds;
- ``evc``: the Enhanced vMotion Compatibility baselines, oldest first per vendor.

The package is the lowest layer: its modules import one another and nothing else of
gpuaudit (not the inventory, the rules, the simulation, the reports or the command
line), so every other layer may read them. It imports none of its modules itself.
"""
