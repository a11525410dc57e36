import sys

from kernelkit.cli.main import main

sys.exit(main())
