"""The README's two commands, kept here once: CI runs the test command from this file
(`.ci/run`), the tests check that the README quotes each command word for word.

    python3 -m tools.commands test     # prints the test command (so does `launch`)

Only the standard library: CI runs it before any environment exists.
"""

from __future__ import annotations

import sys

# Open JupyterLab on the first notebook, in a venv with the locked versions (Linux, macOS).
LAUNCH = ("python3 -m venv .venv && .venv/bin/python -m pip install -c constraints.txt -e . jupyterlab"
          " && JUPYTER_CONFIG_PATH=lab-settings .venv/bin/jupyter lab --ip=127.0.0.1"
          " notebooks/00_input_matrix.ipynb")
# Run the whole test suite, in a venv with the locked versions and the test tools (Linux, macOS).
TEST = ('python3 -m venv .venv && .venv/bin/python -m pip install -c constraints.txt -e ".[test]"'
        " && .venv/bin/python -m pytest")

# The same in Windows PowerShell (5.1 has no &&, so the steps are separated by ;).
LAUNCH_POWERSHELL = ("py -m venv .venv;"
                     " .venv\\Scripts\\python -m pip install -c constraints.txt -e . jupyterlab;"
                     ' $env:JUPYTER_CONFIG_PATH = "lab-settings";'
                     " .venv\\Scripts\\jupyter lab --ip=127.0.0.1 notebooks/00_input_matrix.ipynb")
TEST_POWERSHELL = ('py -m venv .venv; .venv\\Scripts\\python -m pip install -c constraints.txt -e ".[test]";'
                   " .venv\\Scripts\\python -m pytest")

COMMANDS = {"launch": LAUNCH, "test": TEST, "launch-powershell": LAUNCH_POWERSHELL,
            "test-powershell": TEST_POWERSHELL}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in COMMANDS:
        sys.exit(f"usage: python3 -m tools.commands {{{'|'.join(COMMANDS)}}}")
    print(COMMANDS[sys.argv[1]])
