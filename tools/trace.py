"""The page trace's summary: a Chromium trace's main-thread tasks summed by kind
(benchmarks/page_trace.py records the trace; tests/test_slider_latency.py tests this)."""

from __future__ import annotations

import collections

MARK = "slider-benchmark-keydown"
PHASES = ("UpdateLayoutTree", "Layout", "PrePaint", "Paint", "Layerize", "Commit")


def kind(children: list[dict]) -> str:
    """What one main-thread task was, from the events inside it."""
    names = {e["name"] for e in children}
    functions = {_data(e).get("functionName") for e in children if e["name"] == "FunctionCall"}
    if "ProxyMain::BeginMainFrame" in names:
        return "frame"
    if "_onWSMessage" in functions:
        return "messages"
    if "MessagePort::Accept" in names:  # React's scheduler posts its work through a MessageChannel
        return "React"
    if any(e["name"] == "EventDispatch" and _data(e).get("type", "").startswith("key") for e in children):
        return "keys"
    return "other"


def _data(event) -> dict:
    return (event.get("args") or {}).get("data") or {}


def summarise(events: list[dict], dragging: bool, window_ms: float) -> dict:
    """Main-thread ms by kind of task (and by frame phase) in the span measured."""
    keys = sorted(e["ts"] for e in events if e.get("name") == "TimeStamp" and _data(e).get("message") == MARK)
    if not keys:
        raise RuntimeError("no keydown in the trace")
    thread = next((e["pid"], e["tid"]) for e in events
                  if e.get("name") == "TimeStamp" and _data(e).get("message") == MARK)
    spans = [(keys[0], keys[-1] + 100_000)] if dragging else [(k, k + window_ms * 1000) for k in keys]
    mine = sorted((e for e in events if (e.get("pid"), e.get("tid")) == thread and e.get("ph") == "X"),
                  key=lambda e: e["ts"])
    busy, phases, tasks = collections.Counter(), collections.Counter(), collections.Counter()
    for task in (e for e in mine if e["name"] == "ThreadControllerImpl::RunTask"):
        if not any(start <= task["ts"] <= end for start, end in spans):
            continue
        end = task["ts"] + task["dur"]
        children = [e for e in mine
                    if task["ts"] <= e["ts"] and e["ts"] + e.get("dur", 0) <= end and e is not task]
        k = kind(children)
        busy[k] += task["dur"] / 1000
        tasks[k] += 1
        if k == "frame":
            for e in children:
                if e["name"] in PHASES:
                    phases[e["name"]] += e["dur"] / 1000
    span_ms = sum(end - start for start, end in spans) / 1000 if dragging else len(keys) * window_ms
    return {"keydowns": len(keys), "span_ms": span_ms, "busy": dict(busy), "tasks": dict(tasks),
            "frame_phases": dict(phases)}
