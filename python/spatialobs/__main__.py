"""``python -m spatialobs`` runs the command line."""

import sys

from spatialobs.cli import main

sys.exit(main())
