"""`python -m profile_lake.generator ...`: the same as `profile-lake generate ...`."""

import sys

from profile_lake.generator.command import main

sys.exit(main())
