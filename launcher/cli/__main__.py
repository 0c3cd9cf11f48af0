"""``python -m launcher.cli``: the command line (the batch scripts and ``start`` run the launcher this way)."""

from launcher.cli.main import main

main()
