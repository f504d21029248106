"""Tests of the collector, gpuaudit.vsphere.collect: one file per module."""
