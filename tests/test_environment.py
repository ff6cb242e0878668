"""A library declares ranges, the course pins: the files that name packages agree.

pyproject.toml declares the helper's ranges (what a teacher's environment
may already have); constraints.txt, the lock, pins the exact versions that
produced the stored notebook outputs. CI and the README's commands install
with `pip -c constraints.txt`, and so do environment.yml (local conda) and
binder/environment.yml (mybinder.org). A version that drifts in one of them
changes the stored outputs for that route only, which nbval would then report
as a confusing failure.
"""

import os
import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tools import commands
from tools.project import PROJECT, PYTHONS, ROOT, RUNTIME, TEST, lock_lines, locked

HUB_IMAGE = {"numpy": "2.1.3", "matplotlib": "3.9.4", "ipywidgets": "8.1.5", "jupyterlab": "4.3.5"}


def applies(req, python):
    return req.marker is None or req.marker.evaluate({"python_version": python, "extra": "test"})


def pip_lines(path):
    """The entries of the `pip:` section of a conda environment file."""
    text = path.read_text()
    section = text[text.index("  - pip:\n"):]
    return [m[1] for m in re.finditer(r"^\s{6}-\s+(.+?)\s*$", section, re.M)]


def test_every_lock_line_is_an_exact_pin():
    for req in lock_lines():
        assert len(req.specifier) == 1 and next(iter(req.specifier)).operator == "==", \
            f"the lock pins exact versions, got {req}"
    for python in PYTHONS:
        locked(python)  # and no package twice for one Python version


def test_the_helper_declares_ranges_not_pins_and_not_jupyterlab():
    names = {canonicalize_name(r.name) for r in RUNTIME}
    assert "jupyterlab" not in names, "the helper runs in any front end; JupyterLab comes from the lock"
    for req in RUNTIME:
        ops = {s.operator for s in req.specifier}
        assert "==" not in ops and "~=" not in ops, f"{req}: a library declares a range, the lock pins"
    for name in ("numpy", "matplotlib", "ipywidgets"):
        req = next(r for r in RUNTIME if canonicalize_name(r.name) == name)
        assert any(s.operator == ">=" for s in req.specifier), f"{req}: give the tested lower end"


@pytest.mark.parametrize("python", PYTHONS)
def test_every_range_admits_the_locked_version(python):
    pins = locked(python)
    for req in RUNTIME + TEST:
        if not applies(req, python):
            continue
        name = canonicalize_name(req.name)
        assert name in pins, f"{name} is required but the lock has no version for Python {python}"
        assert req.specifier.contains(pins[name], prereleases=True), \
            f"pyproject.toml says {req}, the lock pins {pins[name]} for Python {python}"
    assert "jupyterlab" in pins, "the README's first command takes JupyterLab from the lock"


def test_the_ranges_admit_a_class_image_that_already_has_the_packages():
    """What `pip install` of the helper does in a hub admin's image: keep every version in range.
    The real `pip install --dry-run` runs in tests/test_compat.py."""
    for req in RUNTIME:
        name = canonicalize_name(req.name)
        if name in HUB_IMAGE:
            assert req.specifier.contains(HUB_IMAGE[name]), f"{req} would replace {name} {HUB_IMAGE[name]}"
    assert "jupyterlab" not in {canonicalize_name(r.name) for r in RUNTIME}


def test_this_test_environment_is_the_locked_one():
    """Every package the helper, its test extra and JupyterLab pull in is installed at its locked
    version: the README's test command (`pip install -c constraints.txt ...`) produced it."""
    python = f"{sys.version_info[0]}.{sys.version_info[1]}"
    pins = locked(python)
    env = {"python_version": python}
    todo, seen, wrong = [("attention-helpers", {"test"}), ("jupyterlab", set())], set(), []
    while todo:
        name, extras = todo.pop()
        name = canonicalize_name(name)
        if (name, tuple(sorted(extras))) in seen:
            continue
        seen.add((name, tuple(sorted(extras))))
        dist = metadata.distribution(name)
        if name != "attention-helpers" and pins.get(name) != dist.version:
            wrong.append(f"{name}: installed {dist.version}, locked {pins.get(name)}")
        for line in dist.requires or []:
            req = Requirement(line)
            if req.marker is None or any(req.marker.evaluate({**env, "extra": e}) for e in extras | {""}):
                todo.append((req.name, set(req.extras)))
    assert wrong == [], "reinstall with the README's test command:\n" + "\n".join(sorted(set(wrong)))


def test_binder_is_lean_and_takes_its_versions_from_the_lock():
    lines = [line.split("#")[0].strip() for line in pip_lines(ROOT / "binder" / "environment.yml")]
    # repo2docker sets REPO_DIR (the repository inside the image); pip expands ${REPO_DIR}.
    assert lines == ["-c ${REPO_DIR}/constraints.txt", "jupyterlab", "nbgitpuller", "-e ${REPO_DIR}"]
    assert {"jupyterlab", "nbgitpuller"} <= set(locked("3.11")), "Binder takes every version from the lock"
    text = (ROOT / "binder" / "environment.yml").read_text()
    test_only = {canonicalize_name(r.name) for r in TEST} - {"jupyterlab"}
    named = {canonicalize_name(w) for w in re.findall(r"[A-Za-z][\w.\-]+", text.split("  - pip:")[1])}
    assert named & test_only == set(), "test tools slow Binder's build and start"


def test_conda_environment_takes_the_lock_and_the_test_extra():
    assert pip_lines(ROOT / "environment.yml") == ["-c constraints.txt", "jupyterlab", "-e .[test]"]


@pytest.mark.parametrize("path", ["environment.yml", "binder/environment.yml"])
def test_conda_files_use_a_python_the_lock_covers(path):
    match = re.search(r"^\s*-\s+python=(3\.\d+)\s*$", (ROOT / path).read_text(), re.M)
    assert match, "repo2docker and conda read python=3.x"
    assert match[1] in PYTHONS and locked(match[1])["numpy"]


def test_the_readme_quotes_the_commands_word_for_word():
    """tools/commands.py holds the commands CI and these tests use; the README shows each."""
    readme = (ROOT / "README.md").read_text()
    for name, command in commands.COMMANDS.items():
        assert f"\n{command}\n" in readme, f"the README should quote the {name} command of tools/commands.py"


def test_the_commands_install_with_the_lock():
    for command in commands.COMMANDS.values():
        assert "-m pip install -c constraints.txt -e " in command, command
    for lab in (commands.LAUNCH, commands.LAUNCH_POWERSHELL):
        assert "-e . jupyterlab" in lab and "--ip=127.0.0.1 notebooks/00_input_matrix.ipynb" in lab
    for test in (commands.TEST, commands.TEST_POWERSHELL):
        assert '-e ".[test]"' in test and test.endswith("python -m pytest")
    # PowerShell 5.1 knows no &&; the Windows commands are the POSIX ones with its paths and separators.
    pairs = ((commands.LAUNCH, commands.LAUNCH_POWERSHELL), (commands.TEST, commands.TEST_POWERSHELL))
    for posix, windows in pairs:
        assert "&&" not in windows
        setting = '$env:JUPYTER_CONFIG_PATH = "lab-settings"; '
        translated = (posix.replace("python3 -m venv", "py -m venv").replace(" && ", "; ")
                      .replace(".venv/bin/", ".venv\\Scripts\\")
                      .replace("JUPYTER_CONFIG_PATH=lab-settings ", setting))
        assert translated == windows


def _lab_commands():
    """Every command that starts JupyterLab for the course: the README's, and the conda route's line."""
    readme = (ROOT / "README.md").read_text()
    conda = re.findall(r"`(JUPYTER_CONFIG_PATH=lab-settings jupyter lab [^`]*)`", readme)
    return [commands.LAUNCH, commands.LAUNCH_POWERSHELL, *conda]


def test_every_launch_and_binder_use_the_course_settings():
    import json

    overrides = json.loads((ROOT / "lab-settings" / "overrides.json").read_text())
    assert overrides["@jupyterlab/apputils-extension:notification"] == {"checkForUpdates": False,
                                                                        "fetchNews": "false"}
    assert overrides["@jupyterlab/apputils-extension:kernels-settings"] == {"commsOverSubshells": "disabled"}
    assert overrides["@jupyterlab/notebook-extension:panel"] == {
        "toolbar": [{"name": "executionProgress", "disabled": True}]}
    page_config = json.loads((ROOT / "lab-settings" / "labconfig" / "page_config.json").read_text())
    assert page_config == {"disabledExtensions": {"@jupyterlab/application-extension:faviconbusy": True}}
    launches = _lab_commands()
    assert len(launches) == 3, launches  # the venv (POSIX, PowerShell) and the conda launch
    for command in launches:
        launch = r'(^|&& |; )(JUPYTER_CONFIG_PATH=lab-settings |\$env:JUPYTER_CONFIG_PATH = "lab-settings"; )'
        assert re.search(launch, command), command
    post_build = (ROOT / "binder" / "postBuild").read_text()
    assert "cp lab-settings/overrides.json" in post_build
    assert "cat lab-settings/jupyter_server_config.py >>" in post_build


def test_binder_postbuild_puts_the_course_settings_into_the_image_prefix(tmp_path):
    """Run binder/postBuild as repo2docker does (from the repository, NB_PYTHON_PREFIX set),
    into a prefix that already has a page config of its own: the server config, the
    overrides and the switched-off plugins land where Jupyter reads them, and the
    image's own page config keeps what it had."""
    import json

    labconfig = tmp_path / "etc" / "jupyter" / "labconfig"
    labconfig.mkdir(parents=True)
    (labconfig / "page_config.json").write_text(json.dumps({"disabledExtensions": ["some:plugin"],
                                                            "hubHost": "example"}))
    env = dict(os.environ, NB_PYTHON_PREFIX=str(tmp_path),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    subprocess.run(["bash", "binder/postBuild"], cwd=ROOT, env=env, check=True, timeout=60)

    server_config = (tmp_path / "etc" / "jupyter" / "jupyter_server_config.py").read_text()
    assert server_config == (ROOT / "lab-settings" / "jupyter_server_config.py").read_text()
    overrides = tmp_path / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    assert overrides.read_text() == (ROOT / "lab-settings" / "overrides.json").read_text()
    assert json.loads((labconfig / "page_config.json").read_text()) == {
        "disabledExtensions": {"some:plugin": True, "@jupyterlab/application-extension:faviconbusy": True},
        "hubHost": "example"}


class _Handler:
    nodelay = None

    def set_nodelay(self, value):
        self.nodelay = value


def test_the_course_server_config_sends_kernel_messages_without_nagles_delay(monkeypatch):
    """lab-settings/jupyter_server_config.py, run as Jupyter runs it: the kernel
    WebSocket class it sets switches TCP_NODELAY on before connecting."""
    from jupyter_server.services.kernels.connection.channels import ZMQChannelsWebsocketConnection
    from traitlets.config import Config

    config = Config()
    path = ROOT / "lab-settings" / "jupyter_server_config.py"
    namespace = {"get_config": lambda: config, "__file__": str(path)}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    connection_class = config.ServerApp.kernel_websocket_connection_class
    assert issubclass(connection_class, ZMQChannelsWebsocketConnection)
    assert config.LabApp.app_settings_dir == str(path.parent)  # overrides.json is next to it

    connected = []
    monkeypatch.setattr(ZMQChannelsWebsocketConnection, "connect", lambda self: connected.append(self))
    connection = connection_class.__new__(connection_class)  # no server: only connect() is under test
    handler = _Handler()
    connection.__dict__["_trait_values"] = {"websocket_handler": handler}
    connection_class.connect(connection)
    assert handler.nodelay is True and connected == [connection]


def test_the_readme_launch_command_gives_jupyterlab_the_course_settings(tmp_path):
    """Start JupyterLab as the README does and ask its settings API: the overrides come
    through the server config on the config path (it points JupyterLab at them)."""
    import json
    import secrets
    import socket
    import time
    import urllib.request

    command = commands.LAUNCH
    assert "JUPYTER_CONFIG_PATH=lab-settings .venv/bin/jupyter lab " in command
    arguments = command.split("jupyter lab ", 1)[1].split()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token = secrets.token_hex(8)
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(tmp_path / "config"),
               JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"), JUPYTER_CONFIG_PATH="lab-settings")
    log = open(tmp_path / "log", "wb")
    server = subprocess.Popen([sys.executable, "-m", "jupyterlab", *arguments, "--no-browser",
                               f"--port={port}", "--port-retries=0", f"--IdentityProvider.token={token}",
                               f"--LabApp.user_settings_dir={tmp_path / 'settings'}",
                               f"--LabApp.workspaces_dir={tmp_path / 'workspaces'}",
                               "--ServerApp.allow_root=True"],  # CI may run as root
                              cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=log)
    try:
        def default(plugin, key):
            request = urllib.request.Request(f"http://127.0.0.1:{port}/lab/api/settings/{plugin}",
                                             headers={"Authorization": f"token {token}"})
            with urllib.request.urlopen(request, timeout=10) as response:
                return json.load(response)["schema"]["properties"][key]["default"]

        deadline = time.monotonic() + 90
        while True:
            try:
                assert default("@jupyterlab/apputils-extension:kernels-settings",
                               "commsOverSubshells") == "disabled"
                assert default("@jupyterlab/apputils-extension:notification", "fetchNews") == "false"
                assert {"name": "executionProgress", "disabled": True} in default(
                    "@jupyterlab/notebook-extension:panel", "toolbar")
                page = urllib.request.Request(f"http://127.0.0.1:{port}/lab",
                                              headers={"Authorization": f"token {token}"})
                with urllib.request.urlopen(page, timeout=10) as response:
                    html = response.read().decode()
                config_data = r'<script id="jupyter-config-data" type="application/json">(.*?)</script>'
                page_config = json.loads(re.search(config_data, html, re.S).group(1))
                assert "@jupyterlab/application-extension:faviconbusy" in page_config["disabledExtensions"]
                break
            except OSError:
                assert server.poll() is None, (tmp_path / "log").read_text()
                assert time.monotonic() < deadline, "JupyterLab is not up after 90 s"
                time.sleep(0.3)
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


def test_repo2docker_dockerfile_installs_environment_and_helper_package(tmp_path):
    r2d = shutil.which("jupyter-repo2docker", path=str(Path(sys.executable).parent)) \
        or shutil.which("jupyter-repo2docker")
    assert r2d, "jupyter-repo2docker is a test requirement: pip install -e '.[test]'"
    # A copy of the files git would ship, so local clutter cannot hide a problem.
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split()
    for name in files:
        if (ROOT / name).is_file():
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, tmp_path / name)
    assert (tmp_path / "constraints.txt").is_file(), "the lock must be committed for Binder to use it"
    result = subprocess.run([r2d, "--no-build", "--debug", str(tmp_path)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    dockerfile = result.stdout + result.stderr
    assert "Building conda environment for python=3.11" in dockerfile
    # REPO_DIR is set for the build, the whole repository (with the lock) is copied before the
    # environment is installed, and then the binder environment file is used.
    repo_dir = dockerfile.index("ENV REPO_DIR=")
    copy = dockerfile.index("COPY --chown=0:0 src/ ${REPO_DIR}/")
    install = dockerfile.index('env update -p ${NB_PYTHON_PREFIX} --file "binder/environment.yml"')
    assert repo_dir < copy < install
    assert "./binder/postBuild" in dockerfile



@pytest.mark.parametrize("python", PYTHONS)
def test_the_grading_extra_admits_the_locked_nbgrader(python):
    """tests/test_grading.py installs the grading extra with the lock into its own environment."""
    pins = locked(python)
    for req in (Requirement(r) for r in PROJECT["optional-dependencies"]["grading"]):
        name = canonicalize_name(req.name)
        assert name in pins, f"{name} (grading extra) has no version in the lock"
        assert req.specifier.contains(pins[name]), f"pyproject.toml says {req}, the lock pins {pins[name]}"
