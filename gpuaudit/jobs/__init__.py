"""An audit run as a job: one scan from inventory to reports (scan), its outcome
against the baseline and the previous scan (outcome, diff), the history it is
recorded in, how long reports are kept (retention), the baseline's waivers
(lifecycle), the notification that says how it went (notify), and a fleet of
scans within a memory budget (fleet, fleet_schedule).

It drives the layers below it (the inventory's sources, the check, the reports);
only the command line is above it.
"""
