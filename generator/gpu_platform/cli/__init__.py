"""Command line: ``gpu-platform render|values|validate|template|diff|lint|...``.

One module per command (its ``DESCRIPTION``, ``arguments`` and ``run``), listed in
``registry``; ``parser`` builds argparse from the registry, ``app`` runs one command and owns
the exit codes, ``common`` holds what the commands share, ``readme`` writes the guides'
generated blocks.
"""

from gpu_platform.cli.app import main

__all__ = ["main"]
