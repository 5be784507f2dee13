"""`python -m trt_edge` is `trt-edge`."""

import sys

from trt_edge.cli.main import main

sys.exit(main())
