"""What a panel's picture shows, read two ways, for the browser tests to compare.

- FACTS (Python, run inside the notebook's kernel, or here with `facts_of`): the panel's
  static twin, the matplotlib figure, at the sliders' values now: per chart, each cell's
  colour (as matplotlib maps the value, "masked" for a hatched cell), the number written in
  it and its ink, the colour bar's or value axis' tick labels; each bar's number; the
  read-outs. Read off matplotlib's own artists after a full draw.
- DOM_FACTS (JavaScript, run in the page): the same, read off the SVG that
  attention_helpers/browser_view.js drew.

`differences(static, drawn)` lists where they disagree. HARNESS renders a BrowserView's
state in an empty page with a stand-in for anywidget's model, for tests without JupyterLab.
"""

from __future__ import annotations

FACTS = r'''
def _picture_facts(panel):
    import matplotlib as _mpl
    import numpy as _np
    import attention_helpers as _ah

    def _hex(c):
        return _mpl.colors.to_hex(c)

    def _on_axis(ax, labels, axis="y"):
        """The labels matplotlib drew on the axis (within half a pixel of its ends)."""
        out = []
        for t in labels:
            x, y = t.get_position()
            where = ax.transData.transform((x, y))[1 if axis == "y" else 0]
            low, high = (ax.bbox.y0, ax.bbox.y1) if axis == "y" else (ax.bbox.x0, ax.bbox.x1)
            if t.get_text() and low - 0.5 <= where <= high + 0.5:
                out.append(t.get_text())
        return out

    outs = panel.outputs()
    panel.full_draw_png()  # the twin at these values, laid out and drawn as matplotlib does
    charts, texts = [], []
    for artist, out in zip(panel.artists, outs):
        if artist is None:
            texts.append(str(out))
        elif isinstance(artist, _ah.Heatmap):
            values = _np.asarray(artist.image.get_array().filled(_np.nan), dtype=float)
            colours = artist.image.to_rgba(_np.nan_to_num(values))
            hatched = _np.isnan(values) & (artist.categories is None)
            cells = [["masked" if hatched[i, j] else _hex(colours[i, j]) for j in range(values.shape[1])]
                     for i in range(values.shape[0])]
            numbers = [[t.get_text() for t in row] for row in artist.texts]
            inks = [[_hex(t.get_color()) if t.get_text() else "" for t in row] for row in artist.texts]
            ticks = (_on_axis(artist.colorbar.ax, artist.colorbar.ax.yaxis.get_ticklabels())
                     if artist.colorbar is not None else [])
            key = bool(artist.legend is not None and artist.legend.get_visible())
            charts.append({"kind": "heatmap", "cells": cells, "numbers": numbers, "inks": inks,
                           "ticks": ticks, "masked_key": key})
        else:
            numbers = [t.get_text() for t in artist.texts] if artist.texts[0].get_visible() else []
            ticks = _on_axis(artist.ax, artist.ax.get_yticklabels())
            ax, heights = artist.ax, []
            for bar in artist.bars:  # in pixels, within the axes: a log axis' bars start at its bottom
                clip = lambda y: min(max(y, ax.bbox.y0), ax.bbox.y1)  # noqa: E731
                top = clip(ax.transData.transform((0, bar.get_height()))[1])
                base = ax.bbox.y0 if artist.log else clip(ax.transData.transform((0, 0))[1])
                heights.append(round(abs(top - base), 1))
            charts.append({"kind": "bars", "numbers": numbers, "ticks": ticks, "heights": heights})
    return {"charts": charts, "texts": texts}
'''

DOM_FACTS = r"""
(root) => {
  const box = root.matches('.ah-picture') ? root : root.querySelector('.ah-picture');
  if (!box) return null;
  const colour = (c) => {  // "#rrggbb" from a fill or a computed colour
    if (!c) return '';
    if (c.startsWith('url(')) return 'masked';
    if (c.startsWith('#')) return c.toLowerCase();
    const names = {black: '#000000', white: '#ffffff'};
    if (names[c]) return names[c];
    const m = c.match(/\d+(\.\d+)?/g).map(Number);
    return '#' + m.slice(0, 3).map(v => Math.round(v).toString(16).padStart(2, '0')).join('');
  };
  const charts = [...box.querySelectorAll('svg > g[data-chart]')].map(g => {
    if (g.classList.contains('ah-heatmap')) {
      const rects = [...g.querySelectorAll('rect[data-row]')];
      const nums = [...g.querySelectorAll('text.ah-number')];
      const rows = Math.max(...rects.map(r => +r.dataset.row)) + 1;
      const cols = Math.max(...rects.map(r => +r.dataset.col)) + 1;
      const grid = (f) => [...Array(rows)].map((_, i) => [...Array(cols)].map((_, j) => f(i * cols + j)));
      const key = g.querySelector('.ah-key');
      return {kind: 'heatmap', cells: grid(k => colour(rects[k].getAttribute('fill'))),
              numbers: grid(k => nums[k].textContent),
              inks: grid(k => nums[k].textContent ? colour(nums[k].getAttribute('fill')) : ''),
              ticks: [...g.querySelectorAll('.ah-ticks text')].map(t => t.textContent),
              masked_key: !!key && key.getAttribute('visibility') === 'visible'};
    }
    const nums = [...g.querySelectorAll('text.ah-number')];
    const shown = nums[0] && nums[0].getAttribute('visibility') !== 'hidden';
    return {kind: 'bars', numbers: shown ? nums.map(t => t.textContent) : [],
            ticks: [...g.querySelectorAll('.ah-axis text')].map(t => t.textContent),
            heights: [...g.querySelectorAll('rect[data-bar]')]
              .map(r => Math.round(10 * Number(r.getAttribute('height'))) / 10)};
  });
  const readout = box.querySelector('pre.ah-readout');
  const texts = readout && readout.textContent ? [readout.textContent] : [];
  return {charts, texts, error: (box.querySelector('.ah-error') || {}).textContent || '',
          frame: Number(box.dataset.frame || 0), svg: !!box.querySelector('svg')};
}
"""

# An empty page in which BrowserView states are drawn with a stand-in for anywidget's model:
# window.__show(id, state) draws one (state: its spec, extras, description and values in
# base64); window.__set(id, name, value) changes a trait as a kernel's message would
# (values again in base64); window.__sent[id] lists what the view sent to the kernel.
HARNESS = r"""
async (esm) => {
  const url = URL.createObjectURL(new Blob([esm], {type: 'text/javascript'}));
  const module = await import(url);
  window.__module = module;
  window.__models = {};
  window.__sent = {};
  const bytes = (b64) => { const raw = atob(b64), a = new Uint8Array(raw.length);
    for (let i = 0; i < raw.length; i++) a[i] = raw.charCodeAt(i); return new DataView(a.buffer); };
  window.__show = (id, state) => {
    const traits = {...state, values: bytes(state.values)}, on = {};
    window.__sent[id] = [];
    const model = {get: k => traits[k], set: (k, v) => { traits[k] = v; }, save_changes() {},
                   send: m => window.__sent[id].push(m),
                   on: (e, f) => (on[e] = on[e] || []).push(f),
                   off: (e, f) => { on[e] = (on[e] || []).filter(g => g !== f); }};
    window.__models[id] = {traits, on};
    const el = document.createElement('div');
    el.id = id;
    document.body.appendChild(el);
    module.default.render({model, el});
  };
  window.__set = (id, name, value) => {
    const m = window.__models[id];
    m.traits[name] = name === 'values' ? bytes(value) : value;
    (m.on['change:' + name] || []).forEach(f => f());
  };
}
"""


def facts_of(panel) -> dict:
    """FACTS run here, in this process, on `panel`."""
    namespace = {}
    exec(FACTS, namespace)  # noqa: S102 - the same source the kernel runs
    return namespace["_picture_facts"](panel)


def view_state(view) -> dict:
    """What a page needs to draw a BrowserView (HARNESS's window.__show): its traits."""
    import base64

    return {"spec": view.spec, "extras": view.extras, "description": view.description,
            "values": base64.b64encode(view.values).decode("ascii")}


def differences(static: dict, drawn: dict | None, where: str = "") -> list[str]:
    """Where the browser's picture (DOM_FACTS) shows something else than the static twin (FACTS)."""
    if drawn is None:
        return [f"{where}: no picture drawn"]
    problems = []
    if drawn.get("error"):
        problems.append(f"{where}: the picture says {drawn['error']!r}")
    if len(drawn["charts"]) != len(static["charts"]):
        counts = len(drawn["charts"]), len(static["charts"])
        return problems + [f"{where}: {counts[0]} charts drawn, {counts[1]} in the twin"]
    for k, (a, b) in enumerate(zip(static["charts"], drawn["charts"])):
        for key in a:
            if a[key] != b.get(key) and not (key == "heights" and _close(a[key], b.get(key))):
                problems.append(f"{where}: chart {k} {key}: twin {a[key]!r}, browser {b.get(key)!r}")
    if [t.strip() for t in static["texts"]] != [t.strip() for t in drawn["texts"]]:
        problems.append(f"{where}: read-outs: twin {static['texts']!r}, browser {drawn['texts']!r}")
    return problems


def _close(a, b, tolerance=1.01) -> bool:
    """Bar heights in pixels, to a pixel: matplotlib snaps a bar's edges to the pixel grid."""
    return b is not None and len(a) == len(b) and all(abs(x - y) <= tolerance for x, y in zip(a, b))


def facts_from_saved(view: dict) -> dict:
    """What a saved browser view (the spec, extras and base64 values of a BrowserView, as
    scripts/build_static_site.py keeps them) must show, worked out here with matplotlib's
    colour maps and the helper's number format, not with the ES module: for the static pages.
    Per chart: a heatmap's cells, numbers and inks; a bar chart's numbers (None where it writes none)."""
    import base64

    import matplotlib as mpl
    import numpy as np

    from attention_helpers.plots import _number, ink_for

    values = np.frombuffer(base64.b64decode(view["values"]), dtype="<f8")
    charts = []
    for chart in view["spec"]["charts"]:
        if chart["kind"] == "bars":
            v = values[chart["offset"]:chart["offset"] + len(chart["bars"])]
            charts.append({"numbers": [_number(x, chart["fmt"]) for x in v] if chart["value_labels"] else []})
            continue
        rows, cols = chart["shape"]
        v = values[chart["offset"]:chart["offset"] + rows * cols].reshape(rows, cols)
        if chart["categories"]:
            colour = {c["value"]: c["colour"] for c in chart["categories"]}
            charts.append({"cells": [[colour[x] for x in row] for row in v],
                           "numbers": [[""] * cols for _ in range(rows)]})
            continue
        k = len(charts)
        scale = view["extras"].get("scales", {}).get(str(k)) or chart["scale"]
        rgba = mpl.colors.ListedColormap(chart["lut"])(mpl.colors.Normalize(scale["lo"], scale["hi"])(v))
        mask = np.asarray(chart["mask"] or [True] * (rows * cols), bool).reshape(rows, cols)
        masked = ~mask | ~np.isfinite(v)
        cells, numbers, inks = ([[""] * cols for _ in range(rows)] for _ in range(3))
        for (i, j), x in np.ndenumerate(v):
            cells[i][j] = "masked" if masked[i, j] else mpl.colors.to_hex(rgba[i, j])
            if not masked[i, j]:
                numbers[i][j] = _number(x, chart["fmt"])
                inks[i][j] = "#000000" if ink_for(rgba[i, j]) == "black" else "#ffffff"
        charts.append({"cells": cells, "numbers": numbers, "inks": inks})
    return {"charts": charts, "texts": view["extras"].get("texts", [])}


# ---- in a page that shows a notebook (tools/jupyterlab_driver.py) -------------------------------

# In the kernel: the facts of the panel whose browser view has this uid, as JSON.
_TWIN = FACTS + """
import json as _json, attention_helpers as _ah
_panel = next(v for v in list(globals().values()) if isinstance(v, _ah.Panel) and v.view is not None
              and v.view.spec["uid"] == UID)
print(_json.dumps(_picture_facts(_panel)))
"""


def same_picture(page, handle, where: str) -> list[str]:
    """The browser's picture of the panel `handle` (a slider) belongs to shows what its static
    twin, drawn by matplotlib in the kernel at the same slider values, shows."""
    import json

    from tools.jupyterlab_driver import kernel_output

    drawn = handle.evaluate(f"h => ({DOM_FACTS})(h.closest('.jp-OutputArea'))")
    if drawn is None:
        return [f"{where}: the panel shows no browser picture"]
    uid = handle.evaluate("h => h.closest('.jp-OutputArea').querySelector('.ah-picture').dataset.uid")
    static = json.loads(kernel_output(page, _TWIN.replace("UID", repr(uid))).strip().splitlines()[-1])
    return differences(static, drawn, where)


def check_panels(page, server, name: str) -> list[str]:
    """What the front-end tests ask of one notebook in a front end other than the main one: open
    it, Run All without an error (but in cells tagged raises-exception), and for each panel: its
    picture drawn in the browser, and its first slider, moved with End and Home, changing the
    picture to what the static twin shows at each end. Returns the problems."""
    from tools.jupyterlab_driver import HANDLE, open_notebook, press, run_all, settle, slider_value

    open_notebook(page, server, name)
    cells = run_all(page)
    problems = [f"{name} cell {c['index']}: {c['errors']}" for c in cells
                if c["errors"] and "raises-exception" not in c["tags"]]
    panels = [p for p in page.query_selector_all(".jp-Notebook .jp-OutputArea") if p.query_selector(HANDLE)]
    if not panels:
        problems.append(f"{name}: no panel")
    for scope in panels:
        if scope.query_selector(".ah-picture svg") is None:
            problems.append(f"{name}: a panel without its browser picture")
            continue
        handle = scope.query_selector(HANDLE)
        handle.scroll_into_view_if_needed()
        handle.focus()
        value, picture = slider_value(handle), settle(page, handle)
        for key in ("End", "Home"):
            before, shown = value, picture
            value, picture = press(page, handle, key)
            if value != before and picture == shown:
                problems.append(f"{name}: {key} moved the first slider ({before} -> {value}) and "
                                "changed nothing in the picture")
            problems += same_picture(page, handle, f"{name}, first slider at {value} ({key})")
    return problems
