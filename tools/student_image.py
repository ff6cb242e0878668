"""The student image as a Python environment: what the hub guide's image recipe installs.

The helper, JupyterLab, JupyterHub (for jupyterhub-singleuser), nbgitpuller and nbgrader,
at the lock's versions, with nbgrader's JupyterLab plugins switched off but Validate (its
server extensions stay: every student's server loads them). benchmarks/class_day.py runs the
students' servers from it, and benchmarks/class_load.py with --student-image.

Built on first use in ~/.cache/attention-math/student-image-venv (ATTENTION_STUDENT_IMAGE_VENV
puts it elsewhere), outside the clone so that fresh clones share it, and built again when the
lock, the packages it installs or the helper's files change.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IMAGE = Path(os.environ.get("ATTENTION_STUDENT_IMAGE_VENV",
                            Path.home() / ".cache" / "attention-math" / "student-image-venv"))
PACKAGES = ["jupyterlab", "jupyterhub", "nbgitpuller", "nbgrader"]
# As the hub guide's recipe: students keep nbgrader's Validate button, nothing else of its UI.
NBGRADER_PLUGINS_OFF = ["formgrader", "create-assignment", "assignment-list", "course-list"]


def _stamp() -> str:
    """What the image is built from: the lock, what it installs, and the helper (installed as a copy,
    so that an edit of the helper builds the image again)."""
    digest = hashlib.sha256((ROOT / "constraints.txt").read_bytes())
    digest.update(repr((PACKAGES, NBGRADER_PLUGINS_OFF)).encode())
    for path in [ROOT / "pyproject.toml", *sorted((ROOT / "attention_helpers").rglob("*"))]:
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(ROOT)).encode() + path.read_bytes())
    return digest.hexdigest()[:16]


def student_image(image: Path = IMAGE) -> Path:
    """The student image's bin folder, built from the lock if it is missing or stale."""
    stamp = _stamp()
    marker = image / "built-from-lock"
    if marker.is_file() and marker.read_text() == stamp:
        return image / "bin"
    print(f"building the student image's environment in {image} (a few minutes, once)", flush=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(image)], check=True)
    pip = [str(image / "bin" / "python"), "-m", "pip", "install", "-q", "-c", str(ROOT / "constraints.txt")]
    subprocess.run([*pip, str(ROOT), *PACKAGES], check=True)
    for plugin in NBGRADER_PLUGINS_OFF:
        done = subprocess.run([str(image / "bin" / "jupyter"), "labextension", "disable",
                               "--level=sys_prefix", f"nbgrader:{plugin}"], capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(f"jupyter labextension disable nbgrader:{plugin} failed:\n{done.stderr}")
    marker.write_text(stamp)
    return image / "bin"


def versions(image: Path = IMAGE, names=("jupyterlab", "jupyter_server", "jupyterhub", "nbgrader",
                                         "ipykernel", "matplotlib")) -> dict[str, str]:
    """The versions installed in the student image."""
    out = subprocess.run([str(image / "bin" / "python"), "-c", "import sys; from importlib.metadata import "
                          "version; print(*(version(p) for p in sys.argv[1:]))", *names],
                         check=True, capture_output=True, text=True).stdout.split()
    return dict(zip(names, out))
