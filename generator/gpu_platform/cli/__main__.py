"""``python -m gpu_platform.cli``: the same entry point as the ``gpu-platform`` script."""

import sys

from gpu_platform.cli.app import main

sys.exit(main())
