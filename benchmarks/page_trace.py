"""What the page's main thread does during slider moves: a Chromium trace of one panel.

    python -m benchmarks.page_trace 09 [--panel 0] [--moves 12] [--drag] [--settings DIR]

Opens notebook NN in JupyterLab (the course's settings, lab-settings/, unless
--settings names another folder of server config and overrides),
runs it, and moves the panel's sliders as slider_latency.py does (or drags
its first slider, --drag) with Chromium's tracing on. Then it sums the page's
main-thread tasks by what each one was:

  frame     a new frame: style, layout, paint, layerize, commit
  messages  kernel messages from the WebSocket (JupyterLab's and the widgets' code)
  React     renders React scheduled (JupyterLab's toolbar and status-bar items)
  keys      key events (the slider's own handling)
  other

over the first --window ms after each keydown (moves), or from the first
keydown to 100 ms after the last (a drag). Tracing slows the page down, so
compare the kinds with each other, not with slider_latency.py's timings.
"""

from __future__ import annotations

import argparse
import base64
import json
import shutil
import sys
import tempfile
from pathlib import Path

from benchmarks import slider_latency as sl  # the same driver, page helpers and moves
from tools.jupyterlab_driver import SETTINGS, JupyterLab, chromium, find_chromium
from tools.notebooks import ROOT
from tools.trace import MARK, PHASES, summarise

CATEGORIES = ["devtools.timeline", "disabled-by-default-devtools.timeline", "toplevel", "blink", "v8.execute",
              "cc", "disabled-by-default-devtools.timeline.frame"]


def record(nb: str, panel: int, moves: int, dragging: bool, settings: Path = SETTINGS) -> list[dict]:
    """The trace events of the moves (or the drag), as Chromium writes them."""
    found = sorted((ROOT / "notebooks").glob(f"{nb}_*.ipynb"))
    if len(found) != 1:
        names = [p.name for p in found]
        raise SystemExit(f"need one notebook numbered {nb!r} in notebooks/, found {names or 'none'}")
    path = found[0]
    with tempfile.TemporaryDirectory(prefix="trace-") as folder:
        shutil.copy(path, folder)
        with JupyterLab(folder, settings=settings) as lab, chromium() as browser:
            page = browser.new_page()
            page.add_init_script(sl.WATCH)
            page.add_init_script(f"document.addEventListener('keydown', () => console.timeStamp('{MARK}'),"
                                 " true);")
            sl.open_and_run(page, lab, path.name)
            cell = sl.panels(page)[panel]["cell"]
            sl.measure_moves(page, cell, 4)  # warm up, untraced
            cdp = browser.new_cdp_session(page)
            done = []
            cdp.on("Tracing.tracingComplete", lambda event: done.append(event))
            cdp.send("Tracing.start", {"transferMode": "ReturnAsStream",
                                       "traceConfig": {"includedCategories": CATEGORIES}})
            if dragging:
                sl.drag(page, cell)
            else:
                sl.measure_moves(page, cell, moves)
            cdp.send("Tracing.end")
            for _ in range(1200):  # Chromium writes the trace out within a minute
                if done:
                    break
                page.wait_for_timeout(50)
            else:
                raise RuntimeError("Chromium did not finish writing the trace within a minute")
            chunks = []
            while True:
                part = cdp.send("IO.read", {"handle": done[0]["stream"], "size": 1 << 20})
                data = part["data"]
                chunks.append(base64.b64decode(data) if part.get("base64Encoded") else data.encode())
                if part.get("eof"):
                    break
    trace = json.loads(b"".join(chunks))
    return trace["traceEvents"] if isinstance(trace, dict) else trace


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebook", help="the notebook's number, e.g. 09")
    parser.add_argument("--panel", type=int, default=0, help="which panel (default 0: the first)")
    parser.add_argument("--moves", type=int, default=12, help="single moves to trace (default 12)")
    parser.add_argument("--drag", action="store_true", help="trace a drag of the first slider instead")
    parser.add_argument("--window", type=float, default=40.0, help="ms after each keydown (default 40)")
    parser.add_argument("--settings", type=Path, default=SETTINGS, metavar="DIR",
                        help="server config and JupyterLab overrides (default: the course's, lab-settings/)")
    args = parser.parse_args(argv)
    if find_chromium() is None:
        print("no Chromium: install it (apt-get install chromium) or set CHROMIUM_PATH", file=sys.stderr)
        return 2
    events = record(args.notebook, args.panel, args.moves, args.drag, args.settings.resolve())
    result = summarise(events, args.drag, args.window)
    per, unit = ((result["span_ms"] / 1000, "per second of the drag") if args.drag
                 else (result["keydowns"], f"per move, in the {args.window:.0f} ms after its keydown"))
    print(f"{args.notebook} panel {args.panel}: {result['keydowns']} keydowns; the page's main thread, "
          f"ms {unit} (Chromium tracing on):")
    for k, ms in sorted(result["busy"].items(), key=lambda kv: -kv[1]):
        print(f"  {k:9s} {ms / per:6.1f}  ({result['tasks'][k] / per:.1f} tasks)")
    print(f"  {'busy':9s} {sum(result['busy'].values()) / per:6.1f} of {result['span_ms'] / per:.0f}")
    phases = result["frame_phases"]
    print("  frames by phase: " + ", ".join(f"{p} {phases.get(p, 0) / per:.1f}" for p in PHASES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
