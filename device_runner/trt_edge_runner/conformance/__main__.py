import sys

from trt_edge_runner.conformance import main

sys.exit(main())
