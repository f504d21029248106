"""Small helpers every layer may use: files written whole, YAML read with its line
numbers, URLs checked and redacted, secrets kept out of the debug log, progress,
text made safe for a terminal, the data files the package ships, and the garbage
collector paused over work that builds and keeps millions of objects, or kept off
the objects that outlive the work that reads them.

They import nothing else of gpuaudit, so any module may import them.
"""
