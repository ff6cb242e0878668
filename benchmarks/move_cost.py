"""What one slider move costs the kernel, per panel, in three parts: the slider's own message
handling (the floor), the panel's own math, and the picture.

    python -m benchmarks.move_cost [--notebooks 00 09] [--moves 40]

Runs each notebook in a real kernel (ipykernel, as JupyterLab starts it), then moves each
panel's first slider back and forth over its range by sending the kernel the message a page
sends for a slider move (comm_msg "update"), one at a time, waiting for the kernel to go idle,
and 150 ms apart, as a student pauses between key presses. Per move it records:

- total: the kernel process's CPU time for the move, every thread (from /proc's schedstat,
  in nanoseconds): the message read and parsed, the slider set, the panel's callback, the
  picture's message built and sent;
- math: the panel's compute(...) (timed inside the kernel, this thread's CPU time);
- picture: the rest of the callback's picture work, the browser view's show(...): packing the
  numbers, the ticks of a free colour scale, the message built and sent;

and, in the same kernel, the same moves of a slider of the same kind that swaps pictures drawn
in advance into an image widget (the floor: a move that draws nothing, the PNG floor of
slider_latency.py in the kernel). Prints p50 and p90 per panel, the residual
total - floor - math (what the panel adds beyond its math), and the target: that residual
<= 1 ms at p50 on every panel. The browser's side of a move is slider_latency.py's.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

from tools.notebooks import NOTEBOOKS, client_for, read, run_cells, run_code

TARGET_MS = 1.0  # the picture's share of a move, beyond the floor and the panel's math (issue #62)

# In the kernel after the notebook: wrap each panel's compute and its view's show with CPU
# timers, and make the floor slider. Prints the comm ids to move, as JSON.
INSTRUMENT = r'''
import json as _json, time as _time, ipywidgets as _widgets
import attention_helpers as _ah
_costs = {}

def _timed(name, part, function):
    def timed(*args, **kwargs):
        start = _time.thread_time_ns()
        try:
            return function(*args, **kwargs)
        finally:
            _costs.setdefault(name, {}).setdefault(part, []).append(_time.thread_time_ns() - start)
    return timed

_panels = {}
for _name, _panel in list(globals().items()):
    _seen = {id(p) for p in _panels.values()}
    if _name.startswith("_") or not isinstance(_panel, _ah.Panel) or id(_panel) in _seen:
        continue
    _panels[_name] = _panel
    _panel.compute = _timed(_name, "math", _panel.compute)
    if _panel.view is not None:
        _panel.view.show = _timed(_name, "picture", _panel.view.show)
def _floor_for(panel):
    """A slider like the panel's first (the same class: the same echo) bound to an image that it
    shows one of two pictures drawn in advance: the panel's own static picture, as a data:
    address. What a move costs a kernel that draws nothing."""
    import base64 as _b64
    first = next(iter(panel.sliders.values()))
    pictures = [b"data:image/png;base64," + _b64.b64encode(panel.full_draw_png()) for _ in range(2)]
    pictures[1] += b" "  # another value each move, the same size
    image = _widgets.Image(value=pictures[0], format="url")
    slider = type(first)(**{k: getattr(first, k) for k in ("min", "max", "step", "base", "options")
                            if first.has_trait(k) and (k != "options" or hasattr(first, "options"))})
    slider.observe(lambda change: setattr(image, "value", pictures[len(image.value) == len(pictures[0])]),
                   names="value")
    return slider, image

_floors = {name: _floor_for(p) for name, p in _panels.items()}
_targets = {name: [next(iter(p.sliders.values())).model_id, _range(next(iter(p.sliders.values()))),
                   p.view.model_id if p.view is not None else None, _floors[name][0].model_id]
            for name, p in _panels.items()}
'''

RANGE = r'''
def _range(s):
    """A slider's values from one end to the other and back (at most 21 steps each way)."""
    import numpy as _np
    if hasattr(s, "options"):
        there = [("index", k) for k in range(len(s.options))]
    elif type(s).__name__ == "FloatLogSlider":
        there = [("value", float(s.base ** e)) for e in _np.linspace(s.min, s.max, 21)]
    elif isinstance(s.value, int):
        steps = _np.round(_np.linspace(s.min, s.max, 21)).astype(int)
        there = [("value", int(v)) for v in sorted(set(steps))]
    else:
        there = [("value", round(float(v), 10)) for v in _np.linspace(s.min, s.max, 21)]
    return there + there[::-1]
'''


def cpu_ns(pid: int) -> int:
    """CPU time of every thread of process `pid` so far, in nanoseconds."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError):
            continue  # a thread that ended meanwhile
    return total


def move(kc, comm_id: str, attribute: str, value) -> None:
    """Send the kernel what a page sends for a slider move, and wait until it is idle again."""
    send(kc, comm_id, {"method": "update", "state": {attribute: value}, "buffer_paths": []})


def send(kc, comm_id: str, data: dict) -> None:
    """Send a widget's model in the kernel what its page would, and wait until the kernel is idle."""
    msg = kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
    kc.shell_channel.send(msg)
    while True:
        reply = kc.get_iopub_msg(timeout=30)
        if (reply["parent_header"].get("msg_id") == msg["header"]["msg_id"] and reply["msg_type"] == "status"
                and reply["content"]["execution_state"] == "idle"):
            return


def measured(path: Path, moves: int) -> dict:
    """{panel: {"total": [ms], "floor": [ms], "math": [ms], "picture": [ms]}} for one notebook."""
    import json

    nb = read(path)
    client = client_for(nb, path)
    out = {}
    with client.setup_kernel():
        run_cells(client, nb)
        targets = json.loads(run_code(client, RANGE + INSTRUMENT + "\nprint(_json.dumps(_targets))").strip())
        pid = client.km.provisioner.process.pid
        from jupyter_client import BlockingKernelClient  # a second client, as a page is: its own sockets

        kc = BlockingKernelClient()
        kc.load_connection_info(client.km.get_connection_info())
        kc.start_channels()
        kc.wait_for_ready(timeout=60)
        for name, (comm_id, values, view_id, floor_id) in targets.items():
            if view_id:  # what browser_view.js says once it has drawn: the page runs the view
                send(kc, view_id, {"method": "custom", "content": {"rendered": True}})
            totals, floors = [], []
            for k in range(moves):  # the panel's slider, then the floor's to the same value, in turn
                for target, log in ((comm_id, totals), (floor_id, floors)):
                    attribute, value = values[k % len(values)]
                    time.sleep(0.15)
                    start = cpu_ns(pid)
                    move(kc, target, attribute, value)
                    log.append((cpu_ns(pid) - start) / 1e6)
            out[name] = {"total": totals, "floor": floors}
        kc.stop_channels()
        costs = json.loads(run_code(client, "print(_json.dumps(_costs))").strip().splitlines()[-1])
    for name, parts in costs.items():
        for part, ns in parts.items():
            out[name][part] = [v / 1e6 for v in ns[-moves:]]  # the moves above (not the notebook's own)
    return out


def p90(values):
    return sorted(values)[int(0.9 * (len(values) - 1))]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notebooks", nargs="*", default=None, metavar="NN")
    parser.add_argument("--moves", type=int, default=40)
    args = parser.parse_args(argv)
    notebooks = NOTEBOOKS
    if args.notebooks:
        notebooks = [p for p in notebooks if p.name.split("_")[0] in args.notebooks]
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; {args.moves} moves per panel; "
          "kernel CPU ms per move, p50 (p90)")
    print("| panel | total | floor: pre-drawn pictures | math | picture | total − floor − math |")
    print("|---|---|---|---|---|---|")
    worst = (0.0, "")
    for path in notebooks:
        for name, parts in measured(path, args.moves).items():
            p50 = {part: statistics.median(v) for part, v in parts.items()}
            residual = [t - f - m for t, f, m in zip(parts["total"], parts["floor"], parts["math"])]
            beyond = statistics.median(residual)
            worst = max(worst, (beyond, f"{path.stem} `{name}`"))
            cell = {part: f"{p50[part]:.2f} ({p90(v):.2f})" for part, v in parts.items()}
            print(f"| {path.stem} `{name}` | {cell['total']} | {cell['floor']} | {cell['math']} "
                  f"| {cell.get('picture', '–')} | {beyond:.2f} ({p90(residual):.2f}) |", flush=True)
    print(f"\nagainst the target: total − floor − math <= {TARGET_MS:.0f} ms at p50 on every panel: "
          f"{'yes' if worst[0] <= TARGET_MS else 'NO'} (highest {worst[0]:.2f} ms, {worst[1]})")
    print("\nproduced by: python -m benchmarks.move_cost --moves", args.moves,
          *(["--notebooks", *args.notebooks] if args.notebooks else []))
    return 0


if __name__ == "__main__":
    sys.exit(main())
