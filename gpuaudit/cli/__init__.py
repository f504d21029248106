"""The command line: one module per command group, and what they share.

main (the group, the global options, errors into exit statuses), scan, collect,
plan, reports (rules, diff, baseline, policy), history (history, fleet report) and
config_command (config show); shared (option types, an inventory's source, the
history's location), defaults and config_file (gpuaudit.toml and the environment),
the console, logs, the crash report and signals (interrupts).

Only this package speaks click; it may import every layer below it, and none
imports it.
"""
