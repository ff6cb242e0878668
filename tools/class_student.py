"""One simulated student of a class on one hub (tools/class_load.py says what the class does):
in a thread, what a browser does, from the nbgitpuller link to the panel's slider. The page's
side of ipywidgets is mirrored as tools/class_load.py's docstring describes: one update in flight
per model, a later key press replacing the buffered value, echoes ignored."""

from __future__ import annotations

import contextlib
import json
import threading
import time
import uuid
from datetime import datetime, timezone
from urllib.parse import urlencode, urlparse

import requests
import websocket
from jupyter_server.services.kernels.connection.base import (
    deserialize_msg_from_ws_v1,
    serialize_msg_to_ws_v1,
)

from tools.hub import TARGET, Hub

PROTOCOL = "v1.kernel.websocket.jupyter.org"
# --floor (see tools/class_load.py's docstring), run in the student's kernel after Run All: the
# panel's static twin drawn at every value of the dragged slider, then a slider like it swaps those
# pictures in.
FLOOR = """\
import base64 as _b64
import ipywidgets as _widgets
import attention_helpers as _ah
from attention_helpers.widgets import _WeightSlider as _Slider
_dragged, _view = (_widgets.widgets.widget._instances[m] for m in ("{slider}", "{image}"))
_panel = next(p for p in list(globals().values()) if isinstance(p, _ah.Panel) and p.view is _view)
_start, _steps = _dragged.value, round((_dragged.max - _dragged.min) / _dragged.step)
_pictures = {{}}
for _k in range(_steps + 1):
    _dragged.value = _dragged.min + _k * _dragged.step
    _pictures[_k] = b"data:image/png;base64," + _b64.b64encode(_panel.full_draw_png())
_dragged.value = _start
_floor_image = _widgets.Image(value=_pictures[round((_start - _dragged.min) / _dragged.step)], format="url")
_floor = _Slider(value=_start, min=_dragged.min, max=_dragged.max, step=_dragged.step)
_floor.observe(lambda change: setattr(_floor_image, "value",
                                      _pictures[round((change["new"] - _floor.min) / _floor.step)]), "value")
_widgets.VBox([_floor, _floor_image])"""


# ---- one student ---------------------------------------------------------------
class Student:
    """One student's browser: the hub's pages, nbgitpuller, and the kernel's WebSocket."""

    def __init__(self, hub: Hub, name: str, repo: str, notebook: str, timeout: float = 240,
                 throttle: bool = True, floor: bool = False):
        self.hub, self.name, self.repo, self.notebook, self.timeout = hub, name, repo, notebook, timeout
        self.throttle = throttle  # False: a page without ipywidgets' throttle, one message per key press
        self.floor = floor  # True: drag the panel's floor (FLOOR), not the panel
        self.http = requests.Session()
        self.session = uuid.uuid4().hex
        self.lock = threading.RLock()  # RLock: last_value_answered runs inside events.wait_for
        self.models: dict[str, dict] = {}  # comm_id -> state, from the kernel's comm_open
        self.displayed: list[str] = []  # model ids of displayed widgets, in output order
        self.replies: dict[str, dict] = {}  # msg_id -> execute_reply content
        self.idle: dict[str, float] = {}  # msg_id -> time its "idle" arrived
        self.info: set[str] = set()  # msg_ids of the kernel_info_requests answered
        self.pictures: dict[str, float] = {}  # move msg_id -> time the image's update for it arrived
        self.picture_times: list[float] = []
        self.sent: dict[str, tuple[float, float]] = {}  # move msg_id -> (value, time sent)
        self.in_flight = 0
        self.buffer = None  # the latest value pressed while a move was in flight
        self.ws = None
        self.reader = None
        self.image = self.slider = None
        self.events = threading.Condition(self.lock)
        self.closed = False

    # ---- the hub's pages -------------------------------------------------------
    def link(self) -> str:
        """The nbgitpuller link a teacher hands out."""
        query = {"repo": self.repo, "branch": "main", "targetpath": TARGET,
                 "urlpath": f"lab/tree/{TARGET}/notebooks/{self.notebook}"}
        return f"{self.hub.url}/hub/user-redirect/git-pull?{urlencode(query)}"

    def login_and_pull(self) -> None:
        hub, user = self.hub.url, f"/user/{self.name}/"
        r = self.http.get(self.link(), timeout=60)  # not logged in: the login form
        if "/hub/login" not in r.url:
            raise RuntimeError(f"{self.name}: the link did not lead to the login form ({r.url})")
        xsrf = self.cookie("_xsrf", "/hub/")
        form = {"username": self.name, "password": "class", "_xsrf": xsrf}
        r = self.http.post(r.url, data=form, timeout=60)
        if not self.cookie("jupyterhub-session-id") and not self.cookie("jupyterhub-hub-login"):
            raise RuntimeError(f"{self.name}: login failed ({r.status_code} at {r.url})")
        # The login's redirect starts the server; if it did not (a hub that shows a
        # "Launch server" button instead), this is that button.
        self.http.get(f"{hub}/hub/spawn/{self.name}?{urlencode({'next': self.link()})}", timeout=60)
        deadline = time.monotonic() + self.timeout
        while True:  # the spawn-pending page, until the link lands on the server's git-pull page
            r = self.http.get(self.link(), timeout=60)
            if urlparse(r.url).path == user + "git-pull" and r.ok:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name}: the server did not start ({r.status_code} at {r.url})")
            time.sleep(1)
        # nbgitpuller's page reads the pull's progress from this event stream.
        query = {"repo": self.repo, "branch": "main", "targetpath": TARGET}
        api = f"{hub}{user}git-pull/api?{urlencode(query)}"
        with self.http.get(api, stream=True, timeout=self.timeout) as r:
            phase = None
            for line in r.iter_lines():
                if line.startswith(b"data:"):
                    event = json.loads(line[5:])
                    phase = event.get("phase")
                    if phase in ("finished", "error"):
                        break
        if phase != "finished":
            raise RuntimeError(f"{self.name}: nbgitpuller did not finish: {event}")

    def cookie(self, name: str, path: str | None = None) -> str | None:
        for c in self.http.cookies:
            if c.name == name and (path is None or c.path == path or c.path == path.rstrip("/")):
                return c.value
        return None

    def open_notebook(self) -> None:
        """POST api/sessions as JupyterLab does, then the kernel's WebSocket through the proxy."""
        user = f"/user/{self.name}/"
        xsrf = self.cookie("_xsrf", user)
        body = {"path": f"{TARGET}/notebooks/{self.notebook}", "type": "notebook", "name": self.notebook,
                "kernel": {"name": "python3"}}
        r = self.http.post(f"{self.hub.url}{user}api/sessions", json=body, timeout=60,
                           headers={"X-XSRFToken": xsrf or ""})
        r.raise_for_status()
        self.kernel = r.json()["kernel"]["id"]
        cookies = "; ".join(f"{c.name}={c.value}" for c in self.http.cookies
                            if user.startswith(c.path.rstrip("/") + "/"))
        url = f"ws://127.0.0.1:{self.hub.port}{user}api/kernels/{self.kernel}/channels?session_id={self.session}"
        self.ws = websocket.create_connection(url, subprotocols=[PROTOCOL], cookie=cookies, timeout=60,
                                              origin=self.hub.url)
        self.ws.settimeout(None)
        self.reader = threading.Thread(target=self._read, name=f"ws-{self.name}", daemon=True)
        self.reader.start()
        # As JupyterLab does when the socket opens: the kernel's info, whose reply says it answers.
        # Asked again every 10 s (a reply to any will do) until the setup's timeout.
        deadline, asked = time.monotonic() + self.timeout, []
        while True:
            asked.append(self.send("shell", "kernel_info_request", {}))
            with self.lock:
                if self.events.wait_for(lambda: any(i in self.info or i in self.idle for i in asked),
                                        min(10.0, max(0.0, deadline - time.monotonic()))):
                    return
            if time.monotonic() >= deadline:
                raise TimeoutError(f"{self.name}: no reply to {len(asked)} kernel_info_requests within "
                                   f"{self.timeout:.0f} s; the kernel: {self.hub.kernel_state(self.kernel)}")

    # ---- kernel messages ---------------------------------------------------
    def send(self, channel: str, msg_type: str, content: dict) -> str:
        msg_id = uuid.uuid4().hex
        header = {"msg_id": msg_id, "msg_type": msg_type, "username": self.name, "session": self.session,
                  "date": datetime.now(timezone.utc).isoformat(), "version": "5.3"}
        parts = [json.dumps(part).encode() for part in (header, {}, {}, content)]
        self.ws.send_binary(serialize_msg_to_ws_v1(parts, channel))
        return msg_id

    def _read(self) -> None:
        while not self.closed:
            try:
                frame = self.ws.recv()
            except Exception:
                return
            now = time.monotonic()
            if not isinstance(frame, bytes):
                continue
            channel, parts = deserialize_msg_from_ws_v1(frame)
            header, parent, _, content = (json.loads(p) for p in parts[:4])
            self._handle(channel, header["msg_type"], parent.get("msg_id"), content, now)

    def _handle(self, channel, msg_type, parent, content, now) -> None:
        with self.lock:
            if msg_type == "status" and content.get("execution_state") == "idle":
                self.idle[parent] = now
                if parent in self.sent:  # the status callback of a slider's update (widget.ts _handle_status)
                    self.in_flight = max(0, self.in_flight - 1)
                    if self.buffer is not None and self.in_flight < 1:
                        value, self.buffer = self.buffer, None
                        self._send_move(value)
            elif msg_type == "execute_reply":
                self.replies[parent] = content
            elif msg_type == "kernel_info_reply":
                self.info.add(parent)
            elif msg_type == "comm_open" and content.get("target_name") == "jupyter.widget":
                self.models[content["comm_id"]] = content["data"]["state"]
            elif msg_type == "comm_msg":
                data = content["data"]
                paths = data.get("buffer_paths", [])
                if (data.get("method") == "update" and content["comm_id"] == self.image
                        and ("value" in data.get("state", {}) or ["value"] in paths or ["values"] in paths)):
                    self.pictures.setdefault(parent, now)
                    self.picture_times.append(now)
            elif msg_type in ("display_data", "execute_result"):
                view = content.get("data", {}).get("application/vnd.jupyter.widget-view+json")
                if view:
                    self.displayed.append(view["model_id"])
            self.events.notify_all()

    def wait(self, done, timeout: float, what: str) -> None:
        with self.lock:
            if not self.events.wait_for(done, timeout):
                raise TimeoutError(f"{self.name}: no {what} within {timeout:.0f} s")

    # ---- Run All, then find the panel -------------------------------------------
    def run_all(self) -> None:
        """Every code cell's execute_request at once, as JupyterLab's Run All sends them."""
        user = f"/user/{self.name}/"
        r = self.http.get(f"{self.hub.url}{user}api/contents/{TARGET}/notebooks/{self.notebook}", timeout=60)
        r.raise_for_status()
        cells = [c for c in r.json()["content"]["cells"] if c["cell_type"] == "code"]
        ids = []
        for cell in cells:
            raises = "raises-exception" in cell.get("metadata", {}).get("tags", [])
            ids.append((self.send("shell", "execute_request", {
                "code": cell["source"], "silent": False, "store_history": True, "user_expressions": {},
                "allow_stdin": False, "stop_on_error": not raises}), raises))
        self.wait(lambda: all(i in self.replies for i, _ in ids), self.timeout, "end of Run All")
        failed = [i for i, raises in ids if self.replies[i]["status"] != "ok" and not raises]
        if failed:
            reply = self.replies[failed[0]]
            raise RuntimeError(f"{self.name}: Run All failed: {reply.get('ename')}: {reply.get('evalue')}")
        self._find_panel()
        if self.floor:
            shown = len(self.displayed)
            floor = self.send("shell", "execute_request", {
                "code": FLOOR.format(slider=self.slider, image=self.image), "silent": False,
                "store_history": False, "user_expressions": {}, "allow_stdin": False, "stop_on_error": True})
            self.wait(lambda: floor in self.replies and floor in self.idle, self.timeout, "floor's pictures")
            reply = self.replies[floor]
            if reply["status"] != "ok":
                raise RuntimeError(f"{self.name}: the floor failed: {reply.get('ename')}: "
                                   f"{reply.get('evalue')}")
            self.panel_image, self.panel_slider = self.image, self.slider  # the panel's, for checking
            self._find_panel(self.displayed[shown:])

    def _children(self, model_id: str) -> list[str]:
        state = self.models.get(model_id, {})
        return [c.removeprefix("IPY_MODEL_") for c in state.get("children", [])]

    def _find_panel(self, displayed=None) -> None:
        """The displayed panel with the most sliders (a VBox: controls, then its picture: the browser
        view, or an Image where the kernel draws); its first slider."""
        best = None
        for model_id in self.displayed if displayed is None else displayed:
            children = self._children(model_id)
            picture = self.models.get(children[1], {}).get("_model_name") if len(children) > 1 else None
            if picture not in ("ImageModel", "AnyModel"):
                continue
            sliders, todo = [], [children[0]]
            while todo:
                m = todo.pop(0)
                if self.models.get(m, {}).get("_model_name") == "FloatSliderModel":
                    sliders.append(m)
                todo[:0] = self._children(m)
            if sliders and (best is None or len(sliders) > len(best[1])):
                best = (children[1], sliders)
        if best is None:
            raise RuntimeError(f"{self.name}: no panel with a FloatSlider in {self.notebook}")
        self.image, self.slider = best[0], best[1][0]
        if self.models[self.image].get("_model_name") == "AnyModel":
            # what browser_view.js sends once it has drawn: this page runs the browser view
            self.send("shell", "comm_msg", {"comm_id": self.image, "data": {
                "method": "custom", "content": {"rendered": True}}})
        state = self.models[self.slider]
        self.low, self.high, self.step, self.value = state["min"], state["max"], state["step"], state["value"]
        self.direction = 1

    # ---- a key press on the slider (ipywidgets' throttle) ------------------------
    def press(self) -> float:
        """One key press: the slider's next value, sent now or buffered (widget.ts sync)."""
        nxt = round(self.value + self.direction * self.step, 10)
        if not self.low <= nxt <= self.high:
            self.direction = -self.direction
            nxt = round(self.value + self.direction * self.step, 10)
        self.value = nxt
        with self.lock:
            if self.in_flight >= 1 and self.throttle:
                self.buffer = nxt
            else:
                self._send_move(nxt)
        return time.monotonic()

    def _send_move(self, value: float) -> None:  # with self.lock held
        msg_id = self.send("shell", "comm_msg", {"comm_id": self.slider, "data": {
            "method": "update", "state": {"value": value}, "buffer_paths": []}})
        self.sent[msg_id] = (value, time.monotonic())
        self.in_flight += 1

    def last_value_answered(self, value: float):
        """Time the picture of `value` arrived (or the idle of its move if it showed already), else None."""
        with self.lock:
            if self.buffer is not None or self.in_flight:
                return None
            last = max((m for m in self.sent if self.sent[m][0] == value), key=lambda m: self.sent[m][1],
                       default=None)
            if last is None:
                return None
            return self.pictures.get(last, self.idle.get(last))

    def close(self) -> None:
        self.closed = True
        if self.ws is not None:
            with contextlib.suppress(Exception):
                self.ws.close()
