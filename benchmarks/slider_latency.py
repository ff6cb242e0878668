"""Slider-to-pixels latency in a real JupyterLab, in headless Chromium.

    python benchmarks/slider_latency.py [--moves 60]

Builds a small notebook in a temporary folder with three sliders over the
same 6x6 annotated attention-weight heatmap:

  panel     the project's ah.Panel (one slider per entry of W_Q);
  baseline  a plain ipywidgets.interact that draws a fresh figure with pyplot
            and the inline backend on every move, as notebooks usually do;
  floor     a slider and an image widget whose pictures were all drawn in
            advance: what JupyterLab, ipywidgets and the browser cost alone.

For each, it presses an arrow key on the slider handle (a real key press from
Playwright) and measures, in the page, from the keydown event to the first
animation frame in which the new image is decoded and in the document
(performance.now() at both ends; a MutationObserver sees the new image).
It waits for the kernel to settle between moves, prints p50 and p95 over all
moves and the ratio to the baseline.

Then a drag: 30 key presses 10 ms apart, faster than any redraw. It counts the
pictures the page actually received and checks that the last one shows the
last value (no queue of stale redraws to wait for).

Finally, where the time goes inside the kernel: the same computations timed
in this process (compute, update artists, draw, PNG encode), for the panel,
for the old panel path (a full savefig per move), and for the baseline.

Needs Chromium (see tests/browser_util.py: `apt-get install chromium`, or set
CHROMIUM_PATH).
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from browser_util import JupyterLab, chromium, find_chromium, open_notebook, run_all  # noqa: E402

SETUP = '''\
import numpy as np
import matplotlib.pyplot as plt
import ipywidgets as widgets
import attention_helpers as ah

tokens = ["the", "cat", "sat", "on", "the", "mat"]
rng = np.random.default_rng(0)
X = rng.normal(0, 0.7, size=(6, 4)).round(1)
W_Q = rng.normal(0, 0.7, size=(4, 2)).round(1).clip(-2, 2)
W_K = rng.normal(0, 0.7, size=(4, 2)).round(1).clip(-2, 2)


def weights(W_Q):
    return ah.softmax((X @ W_Q) @ (X @ W_K).T / np.sqrt(2))
'''

PANEL = '''\
panel = ah.Panel(lambda W_Q: [weights(W_Q)],
                 [dict(kind="heatmap", row_labels=tokens, col_labels=tokens,
                       title="attention weights", probabilities=True)],
                 weights={"W_Q": W_Q})
panel'''

# As a notebook usually does it: pyplot, the inline backend, a new figure per move.
BASELINE = '''\
%matplotlib inline
def baseline(w=float(W_Q[0, 0])):
    W = W_Q.copy()
    W[0, 0] = w
    fig, ax = plt.subplots(figsize=(4.2, 3.4), layout="constrained")
    ah.heatmap(weights(W), tokens, tokens, ax=ax, title="attention weights", probabilities=True)
    plt.show()

widgets.interact(baseline, w=widgets.FloatSlider(value=float(W_Q[0, 0]), min=-2, max=2, step=0.1));'''

# What JupyterLab, ipywidgets and the browser cost on their own: the same kind
# of slider and image widget, with every picture drawn in advance.
FLOOR = '''\
pictures = {}
for v in np.round(np.linspace(-2, 2, 41), 1):
    W = W_Q.copy()
    W[0, 0] = v
    panel.set(W_Q=W)
    pictures[float(v)] = panel.image.value
panel.set(W_Q=W_Q)
floor_image = widgets.Image(value=pictures[round(float(W_Q[0, 0]), 1)], format="png")
floor_slider = widgets.FloatSlider(value=round(float(W_Q[0, 0]), 1), min=-2, max=2, step=0.1)
floor_slider.observe(lambda change: setattr(floor_image, "value", pictures[round(change["new"], 1)]), "value")
widgets.VBox([floor_slider, floor_image])'''

# In the page: timestamp every keydown, and resolve when a new or changed
# <img> inside `scope` is decoded and the next frame starts.
WATCH = """
window.__keydown = 0;
document.addEventListener('keydown', () => { window.__keydown = performance.now(); }, true);
// The <img> elements a batch of mutations added or gave a new src.
const changedImages = (records) => records.flatMap(r => r.type === 'attributes' ? [r.target]
    : [...r.addedNodes].flatMap(n => n.tagName === 'IMG' ? [n] : [...(n.querySelectorAll?.('img') || [])]));
const watch = (scope, callback) => {
    const observer = new MutationObserver(records => callback(changedImages(records), observer));
    observer.observe(scope, {subtree: true, childList: true, attributes: true, attributeFilter: ['src']});
};
// Resolves with {t: ms since the last keydown, sig} at the first frame that can show the new image.
const onScreen = (img) => img.decode().catch(() => {}).then(() => new Promise(resolve =>
    requestAnimationFrame(() => resolve({t: performance.now() - window.__keydown, sig: window.__sig(img)}))));
window.__nextPicture = (scope) => new Promise((resolve, reject) => {
    setTimeout(() => reject(new Error('no new picture within 20 s')), 20000);
    watch(scope, (imgs, observer) => {
        if (imgs.length) { observer.disconnect(); onScreen(imgs[0]).then(resolve); }
    });
});
window.__recordPictures = (scope) => {
    window.__pictures = [];
    watch(scope, imgs => imgs.forEach(img => onScreen(img).then(p => window.__pictures.push(p))));
};
"""


def build_notebook(folder: Path) -> str:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                 "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(src) for src in (SETUP, PANEL, BASELINE, FLOOR)]
    nbformat.write(nb, folder / "latency.ipynb")
    return "latency.ipynb"


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, round(q / 100 * (len(values) - 1)))]


def settle(page, scope, quiet_ms=150):
    """Wait until the kernel is idle and the picture has not changed for `quiet_ms`."""
    page.wait_for_function(f"""scope => {{
        const v = window.__state(scope), now = performance.now();
        if (!window.__kernelIdle() || v !== window.__settleView) {{
            window.__settleView = v; window.__settleSince = now; return false;
        }}
        return now - window.__settleSince > {quiet_ms};
    }}""", arg=scope, polling=10, timeout=30_000)


def measure_moves(page, cell: int, moves: int) -> list[float]:
    """Latencies (ms) of `moves` single arrow-key moves of the first slider in output of `cell`."""
    scope = page.query_selector_all(".jp-Notebook .jp-Cell")[cell].query_selector(".jp-OutputArea")
    handle = scope.query_selector(".noUi-handle")
    handle.scroll_into_view_if_needed()
    handle.focus()
    settle(page, scope)
    times, key = [], "ArrowRight"
    for _ in range(moves):
        value = float(handle.get_attribute("aria-valuemax" if key == "ArrowRight" else "aria-valuemin"))
        if abs(float(handle.get_attribute("aria-valuenow")) - value) < 1e-9:  # at an end: turn round
            key = "ArrowLeft" if key == "ArrowRight" else "ArrowRight"
        page.evaluate("scope => { window.__next = window.__nextPicture(scope); }", scope)
        page.keyboard.press(key)
        times.append(page.evaluate("() => window.__next")["t"])
        settle(page, scope)
    return times


def drag(page, cell: int, presses=30, gap_ms=10) -> dict:
    """Press ArrowRight `presses` times `gap_ms` apart, faster than any redraw.

    Counts the pictures the page received, and times the one that shows the
    last value (the picture the page settles on, which must also be the one
    drawn for that value on its own) from the last key press.
    """
    scope = page.query_selector_all(".jp-Notebook .jp-Cell")[cell].query_selector(".jp-OutputArea")
    handle = scope.query_selector(".noUi-handle")
    handle.focus()
    page.keyboard.press("Home")
    settle(page, scope)
    page.evaluate("scope => window.__recordPictures(scope)", scope)
    for _ in range(presses):
        page.keyboard.press("ArrowRight")
        page.wait_for_timeout(gap_ms)
    settle(page, scope)
    pictures = page.evaluate("() => window.__pictures")
    final = page.evaluate("scope => window.__view(scope)", scope)
    for key in ("ArrowRight", "ArrowLeft"):  # one step away and back: the last value drawn on its own
        page.keyboard.press(key)
        page.wait_for_timeout(50)
        settle(page, scope)
    again = page.evaluate("scope => window.__view(scope)", scope)
    last = next(p for p in pictures if p["sig"] == pictures[-1]["sig"])
    return {"presses": presses, "pictures": len(pictures), "last_picture_ms": last["t"],
            "shows_last_value": final.startswith(pictures[-1]["sig"]) and final == again}


def kernel_side(repeats=40) -> dict:
    """Median ms of each step of one redraw, timed in this process with the same code."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    import attention_helpers as ah

    namespace: dict = {}
    exec(SETUP, namespace)
    weights, W_Q, tokens = namespace["weights"], namespace["W_Q"], namespace["tokens"]
    panel = ah.Panel(lambda W_Q: [weights(W_Q)],
                     [dict(kind="heatmap", row_labels=tokens, col_labels=tokens,
                           title="attention weights", probabilities=True)], weights={"W_Q": W_Q})
    values = [W_Q.copy() for _ in range(repeats)]
    for k, W in enumerate(values):
        W[0, 0] = -2 + 4 * k / repeats

    def timed(step):
        out = []
        for W in values:
            t0 = time.perf_counter()
            step(W)
            out.append((time.perf_counter() - t0) * 1000)
        return statistics.median(out)

    heat = panel.artists[0]
    result = {
        "panel: compute": timed(lambda W: weights(W)),
        "panel: update artists": timed(lambda W: heat.update(weights(W))),
        "panel: redraw moving parts, paste numbers, PNG":
            timed(lambda W: (heat.update(weights(W)), panel.png())),
        "panel: whole slider move": timed(lambda W: setattr(panel.sliders["W_Q[0,0]"], "value", W[0, 0])),
        "old panel path: full savefig (layout, all artists, PNG level 6)":
            timed(lambda W: (heat.update(weights(W)), panel.figure.savefig(io.BytesIO(), dpi=72))),
    }
    from IPython.core.pylabtools import print_figure

    def baseline(W):
        fig, ax = plt.subplots(figsize=(4.2, 3.4), layout="constrained")
        ah.heatmap(weights(W), tokens, tokens, ax=ax, title="attention weights", probabilities=True)
        print_figure(fig, "png")  # what the inline backend does at plt.show()
        plt.close(fig)

    result["baseline: new figure + draw + PNG (inline backend)"] = timed(baseline)
    return result


def main(argv=None) -> int:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the clean-ups (server, browser)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=60, help="key presses per slider (default 60)")
    args = parser.parse_args(argv)
    if find_chromium() is None:
        print("no Chromium: install it (apt-get install chromium) or set CHROMIUM_PATH", file=sys.stderr)
        return 2

    print(f"machine: {os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}")
    with tempfile.TemporaryDirectory(prefix="latency-") as folder:
        name = build_notebook(Path(folder))
        with JupyterLab(folder) as lab, chromium() as browser:
            page = browser.new_page()
            page.add_init_script(WATCH)
            open_notebook(page, lab, name)
            cells = run_all(page)
            errors = [c["errors"] for c in cells if c["errors"]]
            if errors:
                print(f"the benchmark notebook failed: {errors}", file=sys.stderr)
                return 1
            # Interleaved, ten moves at a time, so a busy spell on the machine hits all three.
            latency = {"panel": [], "baseline": [], "floor": []}
            for done in range(0, args.moves, 10):
                for cell, kind in enumerate(latency, start=1):
                    latency[kind] += measure_moves(page, cell, min(10, args.moves - done))
            drags = {"panel": drag(page, 1), "baseline": drag(page, 2)}
            lab.shutdown_kernels()

    print(f"\nslider-to-pixels latency, 6x6 annotated heatmap, {args.moves} moves each (ms):")
    p50 = {k: statistics.median(v) for k, v in latency.items()}
    for k, v in latency.items():
        print(f"  {k:9s} p50 {p50[k]:6.1f}   p95 {percentile(v, 95):6.1f}   "
              f"min {min(v):6.1f}   max {max(v):6.1f}")
    print(f"  ratio panel/baseline (p50): {p50['panel'] / p50['baseline']:.2f}")
    print("  (floor: the same widgets showing pictures drawn in advance, i.e. JupyterLab,\n"
          "   ipywidgets and Chromium alone; the panel's own share is p50 - floor p50)")

    print("\ndrag: 30 key presses 10 ms apart")
    for k, d in drags.items():
        print(f"  {k:9s} {d['pictures']:2d} pictures for {d['presses']} presses, the last one "
              f"{d['last_picture_ms']:.0f} ms after the last press; it shows the last value: "
              f"{d['shows_last_value']}")

    print("\ninside the kernel, median ms per move (same code, this process):")
    for step, ms in kernel_side().items():
        print(f"  {step:60s} {ms:6.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
