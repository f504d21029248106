"""Planned work, not failures: what happens to the GPU VMs when a host is taken out of
service on purpose (``maintenance``: each host's maintenance readiness; ``rolling``: the
order of a rolling upgrade with the least GPU VM downtime), and how much more a cluster
takes while it keeps its N+k (``headroom``); what if the estate changed (``whatif``: planned
changes applied to a copy of an inventory, and the audits before and after compared;
``change_file``: the what-if change file, read and checked line by line).

It sits above the rules, whose verdicts on a VM's vMotion it reuses (vgpu.hotmigrate,
migration support, the vGPU plugin options, the stun time, the DRS options), and below
the check, which runs it and hands its answer to the rules that judge it (VM-12, VM-13).
"""
