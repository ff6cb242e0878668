"""The hub of a class on one machine, for benchmarks/class_load.py, benchmarks/class_day.py and
tests/test_class_load.py: JupyterHub on 127.0.0.1 with configurable-http-proxy (npm; installed
into ~/.cache/attention-math/chp if it is not on the PATH), the SimpleLocalProcessSpawner (one
jupyterhub-singleuser server per student, a home folder each), the DummyAuthenticator, the
course's server settings (lab-settings/, or none), the servers and kernels from this environment
or from the student image; a bare repository of this clone's HEAD for nbgitpuller's links; which
process is which (hub, proxy, server, kernel), and stopping them all. tools/class_load.py says
what a class does on it."""


from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil
import requests

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = ROOT / "lab-settings"
BIN = Path(sys.executable).parent
CHP_CACHE = Path.home() / ".cache" / "attention-math" / "chp"
TARGET = "attention-math"  # the folder nbgitpuller pulls the course into
MAX_STUDENTS = 40
HUB_NICE = 10  # the hub's processes run this much nicer than the client (tools/class_load.py says why)
HOW_TO_INSTALL = ("needs JupyterHub and nbgitpuller (`.venv/bin/pip install jupyterhub nbgitpuller`) "
                  "and node with npm (configurable-http-proxy is installed from npm on first use)")


# ---- the hub ---------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def missing() -> str | None:
    """Why the benchmark cannot run here, or None."""
    if not (BIN / "jupyterhub").exists() or not (BIN / "jupyterhub-singleuser").exists():
        return "JupyterHub is not installed: " + HOW_TO_INSTALL
    try:
        import nbgitpuller  # noqa: F401
    except ImportError:
        return "nbgitpuller is not installed: " + HOW_TO_INSTALL
    if find_proxy() is None and not (shutil.which("node") and shutil.which("npm")):
        return "node and npm are missing: " + HOW_TO_INSTALL
    return None


def find_proxy() -> str | None:
    cached = CHP_CACHE / "node_modules" / ".bin" / "configurable-http-proxy"
    return str(cached) if cached.exists() else shutil.which("configurable-http-proxy")


def install_proxy() -> str:
    """configurable-http-proxy from the npm registry, into a cache outside the clone."""
    found = find_proxy()
    if found:
        return found
    CHP_CACHE.mkdir(parents=True, exist_ok=True)
    subprocess.run(["npm", "install", "--prefix", str(CHP_CACHE), "--no-fund", "--no-audit",
                    "configurable-http-proxy@5"], check=True, capture_output=True, timeout=300)
    return str(CHP_CACHE / "node_modules" / ".bin" / "configurable-http-proxy")


def hub_versions() -> dict:
    """The versions of what runs the hub and, without the student image, the servers and kernels."""
    from importlib.metadata import version
    out = {p: version(p) for p in ("jupyterhub", "nbgitpuller", "jupyter_server", "ipykernel", "ipywidgets")}
    pkg = CHP_CACHE / "node_modules" / "configurable-http-proxy" / "package.json"
    if pkg.exists():
        out["configurable-http-proxy"] = json.loads(pkg.read_text())["version"]
    return out


HUB_CONFIG = """\
c = get_config()  # noqa
c.JupyterHub.bind_url = "http://127.0.0.1:{port}"
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {hub_port}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{api_port}"
c.ConfigurableHTTPProxy.command = [{proxy!r}]
c.ConfigurableHTTPProxy.auth_token = {token!r}
c.JupyterHub.db_url = "sqlite:///{folder}/hub.sqlite"
c.JupyterHub.cookie_secret_file = "{folder}/cookie_secret"
c.JupyterHub.pid_file = "{folder}/hub.pid"
c.JupyterHub.authenticator_class = "dummy"
c.JupyterHub.spawner_class = "simple"
c.Spawner.ip = "127.0.0.1"
c.Spawner.cmd = [{singleuser!r}]
c.Spawner.args = {server_args!r}
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 300
c.Spawner.http_timeout = 300
c.Spawner.environment = {environment!r}
c.Spawner.env_keep = ["PATH", "LANG", "LC_ALL"]
# The kernels import the helper from the pulled course (as an image with the course installed
# would), not from wherever this clone's environment has it installed.
c.Spawner.environment["PYTHONPATH"] = lambda spawner: f"{folder}/homes/{{spawner.user.name}}/{target}"
c.SimpleLocalProcessSpawner.home_dir_template = "{folder}/homes/{{username}}"
c.JupyterHub.concurrent_spawn_limit = {limit}
c.JupyterHub.active_server_limit = {limit}
c.JupyterHub.last_activity_interval = 3600
"""


class Hub:
    """JupyterHub with its proxy on 127.0.0.1; every process it starts is stopped on exit."""

    def __init__(self, folder: Path, settings: bool = True, limit: int = MAX_STUDENTS, nice: int = HUB_NICE,
                 servers: Path = BIN):
        """`servers`: the bin folder whose jupyterhub-singleuser runs each student's server (and
        whose Python runs their kernels): this environment's, or a student image's."""
        self.folder, self.port, self.nice = folder, free_port(), nice
        self.url = f"http://127.0.0.1:{self.port}"
        environment = {"MPLBACKEND": "agg", "JUPYTER_PLATFORM_DIRS": "1"}
        if settings:
            environment["JUPYTER_CONFIG_PATH"] = str(SETTINGS)
        (folder / "homes").mkdir(parents=True, exist_ok=True)
        self.config = folder / "jupyterhub_config.py"
        self.config.write_text(HUB_CONFIG.format(
            port=self.port, hub_port=free_port(), api_port=free_port(), proxy=install_proxy(),
            token=secrets.token_hex(16), folder=folder, target=TARGET,
            singleuser=str(servers / "jupyterhub-singleuser"),
            environment=environment, limit=limit,
            server_args=["--allow-root"] if os.geteuid() == 0 else []))  # as in a container run as root
        self.proc = None
        self.seen: set[int] = set()  # every process id seen below the hub, for the clean-up

    def __enter__(self) -> Hub:
        self.log = open(self.folder / "hub.log", "wb")  # noqa: SIM115
        nice = ["nice", "-n", str(self.nice)] if self.nice else []  # nice execs the hub: same process
        self.proc = subprocess.Popen([*nice, str(BIN / "jupyterhub"), "-f", str(self.config)],
                                     cwd=self.folder, stdout=self.log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("JupyterHub exited at start:\n" + self.log_text()[-3000:])
            with contextlib.suppress(requests.RequestException):
                if requests.get(self.url + "/hub/api", timeout=2).ok:
                    self.processes()
                    return self
            time.sleep(0.3)
        self.__exit__()
        raise RuntimeError("JupyterHub did not answer within 90 s:\n" + self.log_text()[-3000:])

    def log_text(self) -> str:
        return (self.folder / "hub.log").read_text(errors="replace")

    def processes(self) -> dict[int, str]:
        """{pid: kind} for the hub and everything below it: hub, proxy, server, kernel, other."""
        if self.proc is None:
            return {}
        found = {self.proc.pid: "hub"}
        with contextlib.suppress(psutil.Error):
            for child in psutil.Process(self.proc.pid).children(recursive=True):
                with contextlib.suppress(psutil.Error):
                    found[child.pid] = kind(child.cmdline())
        self.seen.update(found)
        return found

    def kernel_process(self, kernel_id: str) -> psutil.Process | None:
        """The process of kernel `kernel_id` (its connection file is named after it)."""
        for pid, what in self.processes().items():
            with contextlib.suppress(psutil.Error):
                p = psutil.Process(pid)
                if what == "kernel" and any(kernel_id in arg for arg in p.cmdline()):
                    return p
        return None

    def kernel_state(self, kernel_id: str) -> str:
        """What kernel `kernel_id`'s process is doing, and the hub log's last lines about it."""
        lines = [line for line in self.log_text().splitlines() if kernel_id in line][-5:]
        p, state = self.kernel_process(kernel_id), "no process"
        with contextlib.suppress(psutil.Error):
            if p is not None:
                cpu = p.cpu_times()
                state = (f"pid {p.pid}, {p.status()}, nice {p.nice()}, "
                         f"{cpu.user + cpu.system:.1f} s of CPU in {time.time() - p.create_time():.0f} s")
        return state + "".join(f"\n  {line}" for line in lines)

    def __exit__(self, *exc) -> None:
        if self.proc is None:
            return
        self.processes()
        with contextlib.suppress(ProcessLookupError):
            self.proc.send_signal(signal.SIGTERM)  # the hub stops the servers and the proxy itself
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=30)
        stop_all(self.seen - {self.proc.pid})
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        self.proc = None


def kind(cmdline: list[str]) -> str:
    text = " ".join(cmdline)
    if "configurable-http-proxy" in text:
        return "proxy"
    if "jupyterhub-singleuser" in text:
        return "server"
    if "ipykernel" in text:
        return "kernel"
    return "other"


def stop_all(pids) -> None:
    """SIGTERM, then SIGKILL after 5 s, each of `pids` still alive (by id, one by one)."""
    procs = []
    for pid in pids:
        with contextlib.suppress(psutil.Error):
            p = psutil.Process(pid)
            p.terminate()
            procs.append(p)
    _, alive = psutil.wait_procs(procs, timeout=5)
    for p in alive:
        with contextlib.suppress(psutil.Error):
            p.kill()
    psutil.wait_procs(alive, timeout=5)


def bare_repository(folder: Path) -> str:
    """A bare clone of this clone's HEAD, on branch main, as a file:// address."""
    bare = folder / f"{TARGET}.git"
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], check=True, capture_output=True,
                          text=True).stdout.strip()  # first: others may commit while it clones
    subprocess.run(["git", "clone", "--quiet", "--bare", "--no-local", str(ROOT), str(bare)], check=True,
                   capture_output=True)
    subprocess.run(["git", "-C", str(bare), "update-ref", "refs/heads/main", head], check=True)
    subprocess.run(["git", "-C", str(bare), "symbolic-ref", "HEAD", "refs/heads/main"], check=True)
    return bare.as_uri()
