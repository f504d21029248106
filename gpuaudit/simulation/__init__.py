"""What vSphere HA would do when hosts fail: the cluster model, the exact search for
restart placements, the policy pass, and the rules a placement must keep (GPU
sharing by NVIDIA's figures, NVLink device groups, DRS and placement rules).

It reads the inventory, its facts and NVIDIA's data (gpuaudit.knowledge); the
rules and plans above it ask it where VMs could go. It imports nothing above it.
"""
