import sys

from lpdp.cli import main

sys.exit(main())
