"""A class on one hub: N students drag a panel at once, through a real JupyterHub.

    .venv/bin/python -m benchmarks.class_load [--students 1 5 10 20 30] [--notebook 05_...]

The hub, the students and the measurement live in tools/class_load.py (its
docstring says what runs and what is measured); tests/test_class_load.py runs
the same machinery with two students.
"""

import sys

from tools.class_load import main

if __name__ == "__main__":
    sys.exit(main())
