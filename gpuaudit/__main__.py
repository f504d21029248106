"""python -m gpuaudit: the same as the gpuaudit command."""

from gpuaudit.cli.commands import main

main()
