"""``python -m trajset.pipeline`` runs the command line."""

from .cli import main

main()
