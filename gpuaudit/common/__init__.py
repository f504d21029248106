"""Small helpers every layer may use: files written whole, YAML read with its line
numbers, URLs checked and redacted, secrets kept out of the debug log, progress,
text made safe for a terminal, and the data files the package ships.

They import nothing else of gpuaudit, so any module may import them.
"""
