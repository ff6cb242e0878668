"""JupyterLab in headless Chromium, shared by tests/test_browser.py and
the benchmarks (imported as tools.jupyterlab_driver).

    with JupyterLab(folder) as lab, chromium() as browser:
        page = browser.new_page()
        open_notebook(page, lab, "00_input_matrix.ipynb")
        errors = run_all(page)

JupyterLab runs on 127.0.0.1 on a free port with a random token, with its
own config, settings, workspace and runtime folders, so nothing of the user's
setup leaks in and nothing is written outside the temporary folder. It
runs with the course's server config and setting overrides (lab-settings/,
as the README's launch command and Binder have them) unless `settings=None`
asks for Jupyter's own defaults. It is
started with `expose_app_in_browser`, so the page can run JupyterLab's own
commands (window.jupyterapp) and read the notebook model instead of scraping.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

# The course's server config and JupyterLab setting overrides, as the README's
# launch command and the Binder image use them.
SETTINGS = Path(__file__).resolve().parent.parent / "lab-settings"
CHROMIUM_ENV = "CHROMIUM_PATH"
HOW_TO_ENABLE = (
    "the browser tests need Chromium: install it with `sudo apt-get install chromium` "
    f"(Debian/Ubuntu), or set {CHROMIUM_ENV}=/path/to/chromium (or Chrome); "
    "deselect them with -m 'not browser'"
)
# Headless, offline and as root: no sandbox (root), no GPU, no QUIC, and none
# of the background traffic Chromium starts on its own.
CHROMIUM_FLAGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage",
]
VIEWPORT = {"width": 1280, "height": 900}
QUIET_MS = 500  # run_all: how long the kernel must have been idle with every request answered
CHANGE_TIMEOUT = 10.0  # seconds for the kernel to answer a slider move; it takes ~0.05 s


def find_chromium() -> str | None:
    """The Chromium binary to use: $CHROMIUM_PATH, else chromium on the PATH."""
    if os.environ.get(CHROMIUM_ENV):
        return os.environ[CHROMIUM_ENV]
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        if shutil.which(name):
            return shutil.which(name)
    return None


@contextlib.contextmanager
def chromium(executable: str | None = None):
    """A headless Chromium browser context with a fresh profile."""
    from playwright.sync_api import sync_playwright

    executable = executable or find_chromium()
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile, sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            profile, executable_path=executable, headless=True, args=CHROMIUM_FLAGS,
            viewport=VIEWPORT, timeout=60_000,
        )
        try:
            yield context
        finally:
            context.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop_with_parent() -> None:
    """In the server's process, before it starts: on Linux, get SIGTERM when the
    process that started it dies, even if that one is killed without clean-up."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def descendants(pid: int) -> list[int]:
    """Process ids of every child, grandchild, ... of `pid` (kernels are children of the server)."""
    children: dict[int, list[int]] = {}
    if Path("/proc").is_dir():  # Linux: no need for `ps`, which slim images lack
        for entry in Path("/proc").iterdir():
            with contextlib.suppress(OSError, ValueError, IndexError):
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                children.setdefault(parent, []).append(int(entry.name))
    else:
        out = subprocess.run(["ps", "-A", "-o", "pid=,ppid="], capture_output=True, text=True).stdout
        for line in out.splitlines():
            child, parent = map(int, line.split())
            children.setdefault(parent, []).append(child)
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie is dead but still listed until its parent reaps it.
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().rsplit(")", 1)[-1].split()[0] == "Z")


class JupyterLab:
    """A JupyterLab server over `root`, stopped (kernels included) on exit.

    `python`: the interpreter whose JupyterLab (or, with app="notebook", Notebook 7) runs, and
    whose kernel the notebooks get; by default this one's."""

    def __init__(self, root: Path | str, settings: Path | str | None = SETTINGS, python: str | None = None,
                 app: str = "lab"):
        if app not in ("lab", "notebook"):
            raise ValueError(f"app must be 'lab' (JupyterLab) or 'notebook' (Notebook 7), got {app!r}")
        self.root = Path(root)
        self.settings = settings  # the course's settings folder (None: Jupyter's own defaults)
        self.python, self.app = python or sys.executable, app
        self.proc: subprocess.Popen | None = None
        self.left_behind: list[int] = []  # processes that had to be killed at stop()

    def __enter__(self) -> JupyterLab:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self, timeout: float = 90) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="jupyterlab-")
        tmp = Path(self._tmp.name)
        (tmp / "config").mkdir()
        lab = {"expose_app_in_browser": True, "news_url": None, "extension_manager": "readonly",
               "check_for_updates_class": "jupyterlab.NeverCheckForUpdate"}
        if self.app == "lab" and self._lab_major() < 4:
            del lab["extension_manager"]  # JupyterLab 3 has no such setting and fails to load on it
        (tmp / "config" / "jupyter_server_config.json").write_text(json.dumps({
            "LabApp": lab,
            "JupyterNotebookApp": {"expose_app_in_browser": True},
            "ServerApp": {"terminals_enabled": False, "allow_root": True},
        }))
        self.token, self.port = secrets.token_hex(16), _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        env = dict(os.environ, JUPYTER_CONFIG_DIR=str(tmp / "config"),
                   JUPYTER_RUNTIME_DIR=str(tmp / "runtime"), IPYTHONDIR=str(tmp / "ipython"),
                   PYDEVD_DISABLE_FILE_VALIDATION="1")
        env.pop("MPLBACKEND", None)  # the kernel picks the inline backend, as for a learner
        env.pop("JUPYTER_CONFIG_PATH", None)
        if self.settings:  # as the README's launch command does
            env["JUPYTER_CONFIG_PATH"] = str(self.settings)
        # No "get Jupyter news?" toast over the notebook (and no request for news).
        notification = tmp / "settings/@jupyterlab/apputils-extension/notification.jupyterlab-settings"
        notification.parent.mkdir(parents=True)
        if self.app == "lab":  # (Notebook 7 has no such setting: it fails on the file)
            notification.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
        self.log_path = tmp / "server.log"
        self._log = open(self.log_path, "wb")
        app = "LabApp" if self.app == "lab" else "JupyterNotebookApp"
        self.proc = subprocess.Popen(
            [self.python, "-m", "jupyterlab" if self.app == "lab" else "notebook", "--no-browser",
             "--ip=127.0.0.1", f"--port={self.port}", "--port-retries=0",
             f"--IdentityProvider.token={self.token}",
             f"--ServerApp.root_dir={self.root}", f"--{app}.user_settings_dir={tmp / 'settings'}",
             f"--{app}.workspaces_dir={tmp / 'workspaces'}",
             *([] if self.settings else [f"--{app}.app_settings_dir={tmp / 'no-overrides'}"])],
            stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
            preexec_fn=_stop_with_parent,
        )
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"JupyterLab exited with code {self.proc.returncode}:\n{self.log()}")
            try:
                self.api("status")
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"JupyterLab is not up after {timeout} s:\n{self.log()}") from None
                time.sleep(0.2)

    def _lab_major(self) -> int:
        """The major version of the JupyterLab that `self.python` runs."""
        out = subprocess.run([self.python, "-c", "import jupyterlab; print(jupyterlab.__version__)"],
                             capture_output=True, text=True, check=True).stdout
        return int(out.split(".")[0])

    def url(self, path: str) -> str:
        sep = "&" if "?" in path else "?"
        return f"{self.base}/{path.lstrip('/')}{sep}token={self.token}"

    def api(self, path: str, method: str = "GET"):
        request = urllib.request.Request(f"{self.base}/api/{path}", method=method,
                                         headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
        return json.loads(body) if body else None

    def shutdown_kernels(self) -> None:
        for session in self.api("sessions"):
            self.api(f"sessions/{session['id']}", method="DELETE")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.proc else ""

    def stop(self) -> None:
        """Stop the server and its kernels; kill (by pid) whatever survives a clean stop."""
        if self.proc is None:
            return
        children = descendants(self.proc.pid)
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)  # jupyter-server shuts its kernels down, then exits
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        deadline = time.monotonic() + 10
        while any(alive(p) for p in children) and time.monotonic() < deadline:
            time.sleep(0.1)
        self.left_behind = [p for p in children if alive(p)]
        for pid in self.left_behind:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self._log.close()
        self._tmp.cleanup()
        self.proc = None


# ---- driving a notebook ----------------------------------------------------

_CURRENT = "window.jupyterapp.shell.currentWidget"
# JupyterLab 4 and Notebook 7 expose the app as window.jupyterapp, JupyterLab 3 as window.jupyterlab.
JUPYTERAPP = """if (!('jupyterapp' in window)) { let app;
    Object.defineProperty(window, 'jupyterapp', {
        configurable: true, get: () => app || window.jupyterlab, set: v => { app = v; }}); }"""


def open_notebook(page, lab: JupyterLab, name: str, timeout: float = 120_000) -> None:
    """Open notebook `name` (relative to the server root) and wait until its kernel is idle.

    In a tab that already shows JupyterLab, as a student opens the next notebook: what the
    tab shows is closed (unsaved, see close_documents) and `name` opened in it, which saves
    the 2-3 s of loading JupyterLab again. A new tab loads JupyterLab in a workspace of its
    own, so no earlier notebook is reopened.
    """
    if lab.app == "lab" and page.url.startswith(f"{lab.base}/lab/") \
            and page.evaluate("() => !!window.jupyterapp"):
        close_documents(page)
        # Not awaited and nothing returned: playwright would copy the widget the command's
        # promise gives, a large object graph (about 2.5 s a notebook).
        page.evaluate("name => { window.jupyterapp.commands.execute('docmanager:open', {path: name}); }",
                      name)
    elif lab.app == "lab":
        page.add_init_script(JUPYTERAPP)
        workspace = "w" + secrets.token_hex(4)
        page.goto(lab.url(f"lab/workspaces/{workspace}/tree/{name}"), timeout=timeout)
    else:  # Notebook 7: one notebook per page (its file manager opens another in a new tab)
        if page.url.startswith(lab.base) and page.evaluate("() => !!window.jupyterapp"):
            close_documents(page)  # unsaved, as in JupyterLab, so no "leave the page?" question
        page.goto(lab.url(f"notebooks/{name}"), timeout=timeout)
    page.wait_for_function(
        f"""() => {{
            const w = window.jupyterapp && {_CURRENT};
            return w && w.context && w.context.path === {json.dumps(name)} && w.content
                && w.sessionContext.session && w.sessionContext.session.kernel
                && w.sessionContext.kernelDisplayStatus === 'idle';
        }}""",
        timeout=timeout, polling=100,
    )
    page.evaluate(PAGE_HELPERS)
    page.evaluate("() => window.jupyterapp.shell.collapseLeft?.()")  # more room (JupyterLab's shell)
    # Record everything the kernel says on IOPub, so a warning or traceback printed by a slider
    # callback (which no cell shows) is seen too; and the widget messages the page has sent that
    # the kernel has not finished (__inFlight). The page holds a slider's next value back while
    # one is in flight and sends it when the kernel's idle for that one arrives: so the kernel
    # shows idle for a moment (up to 85 ms seen on an idle machine) with the next move already
    # on its way. __kernelIdle waits for those too.
    page.evaluate(f"""() => {{
        const w = {_CURRENT}, flight = window.__inFlight = new Set();
        w.sessionContext.session.kernel.anyMessage.connect((_, {{msg, direction}}) => {{
            if (direction === 'send' && msg.header.msg_type === 'comm_msg') flight.add(msg.header.msg_id);
            if (direction === 'recv' && msg.header.msg_type === 'status'
                && msg.content.execution_state === 'idle') flight.delete(msg.parent_header.msg_id);
        }});
        window.__iopub = [];
        window.__idle = 0;  // how many requests the kernel has finished, slider moves included
        w.sessionContext.iopubMessage.connect((_, msg) => {{
            const t = msg.header.msg_type;
            if (t === 'status' && msg.content.execution_state === 'idle') window.__idle++;
            if (t === 'error' || (t === 'stream' && msg.content.name === 'stderr')) {{
                window.__iopub.push(t === 'error' ? msg.content.ename + ': ' + msg.content.evalue
                                                 : msg.content.text);
            }}
        }});
    }}""")


def close_documents(page) -> None:
    """Close every document the JupyterLab tab shows, without saving and without asking (their
    kernels keep running: JupyterLab.shutdown_kernels stops them)."""
    page.evaluate("""() => { const open = window.jupyterapp.shell.widgets('main'), widgets = [];
        if (open[Symbol.iterator]) widgets.push(...open);  // JupyterLab 4; JupyterLab 3's lumino iterator:
        else for (let w = open.next(); w !== undefined; w = open.next()) widgets.push(w);
        for (const w of widgets) {
        if (w.context) w.context.model.dirty = false;
        w.dispose();
    } }""")


def run_all(page, timeout: float = 300_000) -> list[dict]:
    """Run all cells (JupyterLab's Run ▸ Run All Cells) and wait for the kernel.

    Returns one dict per code cell: index, tags, execution count, and the
    error outputs it shows ("ename: evalue").
    """
    # The command's promise settles at the first error (even an expected one,
    # in a raises-exception cell) while later cells may still run: so count
    # execute requests and replies, and wait until every request is answered.
    # That alone once let the cells be read while 06's last cell still had no
    # execution count (its reply counted, the cell not yet updated): so it must
    # hold for QUIET_MS in a row.
    page.evaluate(f"""() => {{
        const kernel = {_CURRENT}.sessionContext.session.kernel;
        const n = window.__executes = {{sent: 0, answered: 0, settled: false, doneSince: null}};
        kernel.anyMessage.connect((_, {{msg, direction}}) => {{
            if (msg.header.msg_type === 'execute_request' && direction === 'send') n.sent++;
            if (msg.header.msg_type === 'execute_reply' && direction === 'recv') n.answered++;
        }});
        window.jupyterapp.commands.execute('notebook:run-all-cells').finally(() => {{ n.settled = true; }});
    }}""")
    page.wait_for_function(f"""() => {{ const n = window.__executes, now = performance.now();
        const done = n.settled && n.sent > 0 && n.answered === n.sent && window.__kernelIdle();
        if (!done) {{ n.doneSince = null; return false; }}
        if (n.doneSince === null) n.doneSince = now;
        return now - n.doneSince >= {QUIET_MS}; }}""", timeout=timeout, polling=50)
    return cells(page)


def cells(page) -> list[dict]:
    return page.evaluate(f"""() => {_CURRENT}.content.widgets
        .map((cell, index) => ({{cell, index}}))
        .filter(({{cell}}) => cell.model.type === 'code')
        .map(({{cell, index}}) => {{
            const outputs = cell.model.outputs.toJSON();
            const model = cell.model;  // JupyterLab 4's names, or 3's
            return {{
                index,
                tags: (model.getMetadata ? model.getMetadata('tags') : model.metadata.get('tags')) || [],
                count: model.executionCount,
                source: model.sharedModel?.getSource ? model.sharedModel.getSource() : model.value.text,
                errors: outputs.filter(o => o.output_type === 'error').map(o => o.ename + ': ' + o.evalue),
            }};
        }})""")


# ---- moving a panel's sliders ------------------------------------------------

def wait(page, js: str, arg, timeout: float = CHANGE_TIMEOUT):
    """Wait until `js(arg)` is truthy in the page; return its value, or None after `timeout`."""
    try:
        return page.wait_for_function(js, arg=arg, timeout=timeout * 1000, polling=20).json_value()
    except Exception as err:  # playwright's TimeoutError
        if "Timeout" not in type(err).__name__:
            raise
        return None


_STATE = "window.__state(window.__scope(h))"  # cheap: which images and read-outs are shown
# Settled: the kernel has been idle and the output unchanged for 100 ms; then
# return the signature of what is shown (a hash of the pixels, see tools/jupyterlab_driver.py).
_SETTLED = f"""([h]) => {{
    const state = {_STATE}, now = performance.now();
    if (!window.__kernelIdle() || state !== window.__lastState) {{
        window.__lastState = state; window.__since = now; return false;
    }}
    return now - window.__since > 100 ? window.__view(window.__scope(h)) : false;
}}"""


def settle(page, handle) -> str:
    """Wait until the kernel is idle and the panel of `handle` has not changed for 100 ms; return
    the signature of what it shows."""
    page.evaluate("() => { window.__lastState = null; }")
    view = wait(page, _SETTLED, [handle])
    assert view is not None, f"the kernel stayed busy for {CHANGE_TIMEOUT} s after a slider move"
    return view


# A slider's handle: ipywidgets 8's noUiSlider, or ipywidgets 7's jQuery UI slider.
HANDLE = ".noUi-handle, .ui-slider-handle"


def slider_value(handle) -> str:
    """What a slider shows as its value: ipywidgets 8's aria-valuenow, or ipywidgets 7's read-out."""
    return handle.evaluate("""h => h.getAttribute('aria-valuenow')
        ?? h.closest('.widget-slider')?.querySelector('.widget-readout')?.textContent?.trim() ?? null""")


def press(page, handle, key: str) -> tuple[str, str]:
    """Press `key` on the focused slider; return (its value, the settled picture)."""
    before, idle = slider_value(handle), page.evaluate("() => window.__idle")
    page.keyboard.press(key)
    value = slider_value(handle)
    if value != before:  # the kernel must have handled the move before the picture counts as settled
        wait(page, "n => window.__idle > n", idle)
    return value, settle(page, handle)



def iopub_errors(page, clear: bool = False) -> list[str]:
    """Tracebacks and stderr text the kernel sent since the notebook was opened (or cleared)."""
    return page.evaluate("""clear => {
        const seen = window.__iopub.slice();
        if (clear) window.__iopub.length = 0;
        return seen;
    }""", clear)


# Page-side helpers. __view(scope) is a signature of what a cell's output
# shows: a hash of the pixels of every <img> and <canvas>, of the SVG the
# panels' browser view draws, plus the text of read-outs, so two calls differ
# exactly when the picture changed. __state(scope) is a cheap stand-in (image
# addresses, how many pictures each view has drawn) for polling. Neither
# counts a panel's "picture in words" (a <details> under the picture): it
# follows a quarter second after a slider rests, and tests/test_alt_text.py
# checks it in the kernel.
PAGE_HELPERS = """
window.__hash = (text) => {
    let x = 2166136261;
    for (let i = 0; i < text.length; i++) x = Math.imul(x ^ text.charCodeAt(i), 16777619);
    return (x >>> 0).toString(16);
};
window.__sig = (el) => {
    if (el.tagName === 'svg') return 'svg:' + window.__hash(el.outerHTML);
    const w = el.naturalWidth || el.width, h = el.naturalHeight || el.height;
    if ((el.tagName === 'IMG' && !el.complete) || !w || !h) return 'empty';
    const c = document.createElement('canvas');
    c.width = w; c.height = h;
    const g = c.getContext('2d');
    g.drawImage(el, 0, 0);
    const d = new Uint32Array(g.getImageData(0, 0, w, h).data.buffer);
    let x = 2166136261;
    for (let i = 0; i < d.length; i++) x = Math.imul(x ^ d[i], 16777619);
    return w + 'x' + h + ':' + (x >>> 0).toString(16);
};
window.__scope = (handle) => handle.closest('.jp-OutputArea') || document.body;
window.__readouts = (scope) => [...scope.querySelectorAll('.widget-html-content, .ah-readout, .ah-error')]
    .filter(e => !e.querySelector('details')).map(e => e.textContent).join(' ');
window.__pictureElements = (scope) => [...scope.querySelectorAll('img, canvas, .ah-picture svg')];
window.__view = (scope) =>
    window.__pictureElements(scope).map(window.__sig).join(' ') + ' | ' + window.__readouts(scope);
// Cheaper than __view, for polling: changes whenever a picture or read-out is replaced.
window.__state = (scope) =>
    [...scope.querySelectorAll('img')].map(e => e.src.slice(-60)).join(' ') + ' '
    + [...scope.querySelectorAll('.ah-picture')].map(e => e.dataset.frame).join(' ') + ' | '
    + window.__readouts(scope);
window.__kernelIdle = () =>
    window.jupyterapp.shell.currentWidget.sessionContext.kernelDisplayStatus === 'idle'
    && !(window.__inFlight && window.__inFlight.size);
"""


def kernel_output(page, code: str) -> str:
    """Run `code` in the open notebook's kernel (as a cell would, without a cell) and return what
    it printed."""
    return page.evaluate("""async (code) => {
        const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
        const future = kernel.requestExecute({code, silent: false, store_history: false});
        let out = '', error = null;
        future.onIOPub = msg => {
            if (msg.header.msg_type === 'stream') out += msg.content.text;
            if (msg.header.msg_type === 'error') error = msg.content.ename + ': ' + msg.content.evalue;
        };
        await future.done;
        if (error) throw new Error(error);
        return out;
    }""", code)
