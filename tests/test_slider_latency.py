"""The slider benchmark's own logic, without a browser (the benchmark itself needs
Chromium and minutes):

- --server-times: the config it adds logs each kernel message the server writes, and
  the trip back splits at that write into two parts that add up;
- the page trace sums the page's main-thread tasks by kind, within the window;
- each target is judged on the unrounded figures.
"""

import json

import pytest
from jupyter_client.session import Session
from traitlets.config import Config

from tools import latency as slider_latency
from tools import trace as page_trace


def _course_config(server):
    """Run the config file the way Jupyter does (get_config() defined), in its own folder."""
    c = Config()
    path = server.settings / "jupyter_server_config.py"
    exec(compile(path.read_text(), str(path), "exec"),
         {"get_config": lambda: c, "__file__": str(path), "__name__": "jupyter_server_config"})
    return c


def test_server_times_config_logs_each_message_the_server_writes(tmp_path, monkeypatch):
    server = slider_latency.ServerTimes(slider_latency.SETTINGS, tmp_path)
    assert (server.settings / "overrides.json").is_file()  # the course's overrides go along
    c = _course_config(server)
    timed = c.ServerApp.kernel_websocket_connection_class
    # It wraps the course's own connection (the one without Nagle's delay), not the plain one.
    assert [k.__name__ for k in timed.__mro__[:2]] == ["_TimedConnection", "NoDelayKernelConnection"]
    assert c.LabApp.app_settings_dir == str(server.settings)

    written = []
    base = timed.__mro__[1]
    monkeypatch.setattr(base, "handle_outgoing_message", lambda self, stream, msg: written.append(msg))
    session = Session(key=b"")
    message = session.msg("status", {"execution_state": "busy"})
    connection = object.__new__(timed)  # no server around it: only what the method uses
    monkeypatch.setattr(timed, "session", session, raising=False)
    parts = session.serialize(message)
    connection.handle_outgoing_message("iopub", parts)

    assert written == [parts]  # the message still goes to the WebSocket, unchanged
    assert server.wrote(message["header"]["msg_id"]) is not None
    assert server.wrote("some other id") is None
    logged_id, _ = json.loads(server.log.read_text().splitlines()[-1])
    assert logged_id == message["header"]["msg_id"]


def test_the_trip_back_splits_at_the_server_write_into_parts_that_add_up():
    class Wrote:  # the server wrote the picture 1003.5 ms after the page's time origin
        def wrote(self, msg_id):
            return {"picture": 5000.0 + 1003.5}.get(msg_id)

    hop = {"origin": 5000.0, "key": 980.0, "sent": 981.0, "busy": 983.0, "pictureSent": 1000.0,
           "pictureHere": 1010.0, "pictureId": "picture", "view": 1010.5, "decoded": 1015.0, "frame": 1020.0}
    split = slider_latency.hops(hop, Wrote())
    assert split["back"] == 10.0
    assert (split["server"], split["page"]) == (3.5, 6.5)
    assert split["server"] + split["page"] == split["back"]
    assert "server" not in slider_latency.hops(hop)  # without --server-times: one "back" hop
    assert "server" not in slider_latency.hops(dict(hop, pictureId="not logged"), Wrote())
    assert sum(slider_latency.hops(hop).values()) == hop["frame"] - hop["key"]


def test_server_times_refuses_jupyters_own_settings(capsys):
    with pytest.raises(SystemExit) as stopped:
        slider_latency.arguments(["--server-times", "--lab-defaults"])
    assert stopped.value.code == 2
    assert "--server-times" in capsys.readouterr().err


def _event(name, ts, dur=None, thread=1, **data):
    event = {"name": name, "ts": ts, "pid": 1, "tid": thread, "ph": "X" if dur is not None else "I",
             "args": {"data": data}}
    if dur is not None:
        event["dur"] = dur
    return event


def test_page_trace_sums_main_thread_tasks_by_kind_within_the_window():
    task = "ThreadControllerImpl::RunTask"
    events = [
        _event("TimeStamp", 1_000, message=page_trace.MARK),
        _event(task, 2_000, 3_000), _event("ProxyMain::BeginMainFrame", 2_100, 2_800),  # a 3 ms frame
        _event("Paint", 2_200, 1_000), _event("Layerize", 3_300, 500),
        _event(task, 6_000, 2_000), _event("FunctionCall", 6_100, 1_500, functionName="_onWSMessage"),
        _event(task, 9_000, 1_500), _event("MessagePort::Accept", 9_100, 1_300),  # React's scheduler
        _event(task, 11_000, 400), _event("EventDispatch", 11_050, 300, type="keyup"),
        _event(task, 12_000, 700),  # nothing recognisable inside
        _event(task, 3_000, 9_000, thread=2),  # another thread: not the page's
        _event(task, 60_000, 5_000),  # after the 40 ms window
    ]
    result = page_trace.summarise(events, dragging=False, window_ms=40)
    assert result["keydowns"] == 1 and result["span_ms"] == 40
    assert result["busy"] == {"frame": 3.0, "messages": 2.0, "React": 1.5, "keys": 0.4, "other": 0.7}
    assert result["frame_phases"] == {"Paint": 1.0, "Layerize": 0.5}
    # A drag counts from the first keydown to 100 ms after the last: the late task too.
    assert page_trace.summarise(events, dragging=True, window_ms=40)["busy"]["frame"] == 3.0
    assert page_trace.summarise(events, dragging=True, window_ms=40)["busy"]["other"] == 5.7


def _row(name, p50, p95, per_second=40.0, last=True):
    return {"name": name, "p50": p50, "p95": p95,
            "drag": {"per_second": per_second, "shows_last_value": last}}


def test_targets_are_judged_on_the_unrounded_figures():
    floor = {"name": "floor", "p50": 27.0, "p95": 33.0, "drag": None}
    fine = [_row("a", 15.0, 30.0), _row("b", 20.0, 39.9, per_second=30.0)]
    assert all(held for _, held, _ in slider_latency.targets(fine, floor))

    def failed(rows, floor=floor):
        return [what for what, held, _ in slider_latency.targets(rows, floor) if not held]

    # 29.6 pictures a second would print as "30" in the table; the target still fails.
    assert failed(fine + [_row("c", 10.0, 20.0, per_second=29.6)]) == ["every drag >= 30 pictures/s"]
    assert failed(fine + [_row("c", 10.0, 40.1)]) == ["every p95 <= 40 ms"]
    assert failed(fine + [_row("c", 10.0, 20.0, last=False)]) == ["every drag ends on the last value"]
    assert failed(fine + [_row("c", 20.1, 30.0)]) == ["every p50 <= 20 ms"]
    assert failed(fine, dict(floor, p50=19.9)) == ["every p50 below the pre-drawn PNG floor's"]
    undragged = [dict(r, drag=None) for r in fine]  # --no-drag: no drag targets to judge
    assert [what for what, _, _ in slider_latency.targets(undragged, floor)] == [
        "every p50 <= 20 ms", "every p95 <= 40 ms", "every p50 below the pre-drawn PNG floor's"]
