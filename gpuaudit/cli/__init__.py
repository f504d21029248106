"""The command line: the commands (click), the options read from gpuaudit.toml and
the environment, the console that prints a scan's progress and verdict, the log
set-up, the crash report and the handling of signals.

Only this package speaks click; it may import every layer below it, and none
imports it.
"""
