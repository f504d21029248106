"""gpuaudit: audit VMware vSphere estates that run GPU workloads."""

__version__ = "0.1.0"
