"""Text alternatives: every picture can say in words what it shows.

For a screen reader, or a page without images. A chart drawn by the plot
helpers (plots.heatmap, plots.bar_chart, ...) registers itself with
`register(ax, chart)` and describes itself; a chart drawn with plain
matplotlib is described from what it holds (title, axes, labelled lines and
bars, their ranges); `set_description` gives a drawing a text written by hand.

    describe(figure_or_axes_or_chart) -> str

In IPython, a displayed figure carries its description as the image's "alt"
metadata, which nbconvert's HTML writes into the <img alt="..."> attribute.
"""

from __future__ import annotations

import re
import weakref

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

__all__ = ["describe", "set_description", "register", "register_with_ipython"]

_DRAWN = weakref.WeakKeyDictionary()  # Axes -> the chart drawn into it (it has a describe() method)
_GIVEN = weakref.WeakKeyDictionary()  # Figure or Axes -> a description written by hand
_PARTS = weakref.WeakSet()  # Axes that are part of another panel's picture (a colour bar)


def register(ax, chart, parts=()) -> None:
    """Say that `chart` (anything with a describe() method) is what `ax` shows; `parts`
    are further Axes that belong to its picture (a colour bar), not panels of their own."""
    _DRAWN[ax] = chart
    _PARTS.update(parts)


def set_description(target, text: str) -> None:
    """Give a Figure or an Axes a description written by hand (for drawings
    whose meaning the data alone does not carry, such as a diagram)."""
    if not isinstance(target, (Figure, Axes)):
        raise TypeError(f"set_description needs a matplotlib Figure or Axes, got {type(target).__name__}")
    if not isinstance(text, str) or not text.strip():
        raise ValueError("set_description needs a non-empty text")
    _GIVEN[target] = text.strip()


def describe(target) -> str:
    """A short text alternative for a Figure, an Axes, or a chart the helpers drew.

    A figure is described panel by panel; a panel drawn by the helpers
    describes itself, one drawn with plain matplotlib is described from what
    it holds.
    """
    if isinstance(target, Axes):
        if target in _GIVEN:
            return _GIVEN[target]
        return _DRAWN[target].describe() if target in _DRAWN else _describe_axes(target)
    if isinstance(target, Figure):
        if target in _GIVEN:
            return _GIVEN[target]
        panels = [ax for ax in target.axes if ax not in _PARTS and ax.get_visible()]
        if len(panels) == 1:
            return describe(panels[0])
        return f"Figure with {len(panels)} panels. " + " ".join(
            f"Panel {k} of {len(panels)}: {describe(ax)}" for k, ax in enumerate(panels, 1))
    if callable(getattr(target, "describe", None)):  # a Heatmap, a Bars, ...
        return target.describe()
    raise TypeError(f"describe needs a Figure, an Axes, a Heatmap or a Bars, got {type(target).__name__}")


def _describe_axes(ax) -> str:
    """Describe a panel drawn with plain matplotlib from the artists it holds."""
    title = plain(ax.get_title())
    parts = [f"Chart {title!r}" if title else "Chart"]
    xlabel, ylabel = plain(ax.get_xlabel()), plain(ax.get_ylabel())
    if xlabel or ylabel:
        scale = {axis: f" ({s} scale)" if s != "linear" else "" for axis, s in
                 (("x", ax.get_xscale()), ("y", ax.get_yscale()))}
        parts.append(f"x axis: {xlabel or 'unlabelled'}{scale['x']}, "
                     f"y axis: {ylabel or 'unlabelled'}{scale['y']}")
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    for container in ax.containers:
        heights = [bar.get_height() for bar in container]
        names = [_near_tick(ax, bar.get_x() + bar.get_width() / 2, ticks) for bar in container]
        label = container.get_label()
        parts.append(("bars" if label.startswith("_") else f"bars {plain(label)!r}") + ": "
                     + ", ".join(f"{n} {h:.3g}" for n, h in zip(names, heights)))
    unlabelled = 0
    for line in ax.get_lines():
        label = line.get_label()
        x, y = np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
        if label.startswith("_") or len(x) == 0:
            unlabelled += 1
            continue
        parts.append(f"{plain(label)!r}: {len(x)} points, at x = {x[0]:.4g} y = {y[0]:.3g}, "
                     f"at x = {x[-1]:.4g} y = {y[-1]:.3g}, y from {np.nanmin(y):.3g} to {np.nanmax(y):.3g}")
    if unlabelled:
        parts.append(f"{unlabelled} unlabelled line{'s' if unlabelled > 1 else ''}")
    points = np.concatenate([np.asarray(c.get_offsets(), float).reshape(-1, 2) for c in ax.collections]
                            or [np.zeros((0, 2))])
    if len(points):
        rows = {round(float(y), 6): t.get_text() for y, t in zip(ax.get_yticks(), ax.get_yticklabels())}
        names = [rows.get(round(float(y), 6)) for y in points[:, 1]]
        if all(names):  # each marker sits on a labelled row: count them per row
            parts.append(", ".join(f"{names.count(n)} markers on {n}" for n in dict.fromkeys(names)))
        else:
            parts.append(f"{len(points)} markers")
    if not ax.containers and not any(not line.get_label().startswith("_") for line in ax.get_lines()):
        words = list(dict.fromkeys(t.get_text().strip() for t in ax.texts if t.get_text().strip()))
        if words:
            parts.append("texts: " + join(words, 12))
    return "; ".join(parts) + "."


def _near_tick(ax, x, ticks):
    """The label of the x tick nearest to position x (within half a tick spacing), or x itself."""
    positions = np.asarray(ax.get_xticks(), dtype=float)
    if len(positions) and len(positions) == len(ticks):
        k = int(np.abs(positions - x).argmin())
        spacing = np.diff(np.sort(positions)).min() if len(positions) > 1 else 1.0
        if abs(positions[k] - x) < spacing / 2 and ticks[k]:
            return ticks[k]
    return f"{x:g}"


def join(labels, at_most=10) -> str:
    """Labels as one line, "a, b, c" (the first `at_most`, then how many more)."""
    labels = [" ".join(str(label).split()) for label in labels]
    more = len(labels) - at_most
    return ", ".join(labels[:at_most]) + (f" and {more} more" if more > 0 else "")


def axis_name(label: str) -> str:
    """ "query (row)" -> "query": the description says rows and columns itself."""
    return re.sub(r"\s*\((row|column)\)\s*$", "", plain(label)) or "unlabelled"


# TeX -> readable text, applied in this order (the course's formulas use only these).
_SYMBOLS = {"cdot": "·", "times": "×", "sum": "Σ", "infty": "∞", "partial": "∂", "delta": "δ",
            "dots": "…", "ldots": "…", "in": "∈", "lVert": "‖", "rVert": "‖", "approx": "≈", "le": "≤",
            "ge": "≥", "neq": "≠", "to": "→", "sin": "sin", "cos": "cos", "exp": "exp", "log": "log",
            "alpha": "α", "beta": "β", "gamma": "γ", "theta": "θ", "lambda": "λ", "mu": "μ", "pi": "π",
            "sigma": "σ", "omega": "ω"}
_TEX_STEPS = [
    (r"\\(left|right)\b|\\!", ""),
    (r"\\q?quad\b", "   "), (r"\\[,;:]", " "),
    (r"([_^])\\(?:text|mathrm)\{([^{}]*)\}", r"\1{\2}"),  # d_\text{model}
    (r"\\(?:text|mathrm|operatorname)\{([^{}]*)\}", r"\1"),
    (r"\s*\\cdot\s*", "·"), (r"\\lVert\s*", "‖"), (r"\\partial\s*", "∂"),
    (r"\\mathbb\{R\}", "ℝ"),
    (r"\^\{?\\top\}?", "ᵀ"),
    (r"\\begin\{([pb]?matrix)\}(.*?)\\end\{\1\}",
     lambda m: "[" + m.group(2).replace("\\\\", ";").replace("&", ",") + "]"),
]


def tex_to_text(tex: str, html: bool = False) -> str:
    """A formula (without its $s) as text: QK^\\top/\\sqrt{d_k} -> QKᵀ/√d_k, or with html=True
    QKᵀ/√d<sub>k</sub>. The one converter for labels, the cheat sheet and the static pages."""
    script = _html_script if html else _plain_script
    for pattern, replacement in _TEX_STEPS:
        tex = re.sub(pattern, replacement, tex, flags=re.S)
    for _ in range(6):  # innermost braces first: fractions, roots, scripts
        tex = re.sub(r"\\frac\{([^{}]*)\}\{([^{}]*)\}",
                     lambda m: f"{_group(m.group(1))}/{_group(m.group(2))}", tex)
        tex = re.sub(r"\\sqrt\{([^{}]*)\}", lambda m: "√" + _group(m.group(1)), tex)
        tex = re.sub(r"([_^])\{([^{}]*)\}", lambda m: script(m.group(1), m.group(2)), tex)
    tex = re.sub(r"\\(sin|cos|exp|log)(?=[\\\w])", r"\1 ", tex)  # \cos\alpha -> cos α
    tex = re.sub(r"\\([A-Za-z]+)", lambda m: _SYMBOLS.get(m.group(1), m.group(1)), tex)
    tex = re.sub(r"([_^])(\w|[^\s<])", lambda m: script(m.group(1), m.group(2)), tex)
    return re.sub(r"[{}]", "", tex).strip()


def _group(text: str) -> str:
    return f"({text})" if re.search(r"[\s+\-/·]", re.sub(r"<[^>]+>", "", text)) else text


def _html_script(kind: str, text: str) -> str:
    tag = "sub" if kind == "_" else "sup"
    return f"<{tag}>{text}</{tag}>"


def _plain_script(kind: str, text: str) -> str:
    return kind + text


def plain(text: str) -> str:
    """A label without the TeX markup a screen reader would spell out ($d_k$ -> d_k)."""
    return tex_to_text(text.replace("$", ""))


def _figure_bundle(figure):
    """IPython display hook: no data of its own, only the figure's description as
    the "alt" of the PNG the inline backend draws (its default format)."""
    return {}, {"image/png": {"alt": describe(figure)}}


def register_with_ipython(shell=None) -> bool:
    """In IPython, attach every displayed figure's description to its image; True if done.

    The inline backend registers its own image formatters for Figure (and
    re-registers them whenever it is configured), so the description goes
    through the mime-bundle formatter, which that leaves alone; IPython merges
    its metadata with the image the inline backend draws. Called on import
    with the running shell, if there is one.
    """
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:
            return False
        shell = get_ipython()
    if shell is None:
        return False
    shell.display_formatter.mimebundle_formatter.for_type(Figure, _figure_bundle)
    return True


register_with_ipython()
