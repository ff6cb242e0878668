"""Build the static HTML edition of the course: read it without a kernel.

    python scripts/build_static_site.py OUT_DIR

Writes into OUT_DIR (flat, one folder):
- index.html         the project README
- guide.html         the teacher's guide (notebooks/README.md)
- NN_name.html       one page per notebook in notebooks/, with its stored outputs
- cheat_sheet.html   the cheat sheet notebook, and cheat_sheet_print.html, the printable page

Links between these pages are rewritten (.ipynb and README.md to .html); a
link to another file of the repository (a solution, a test) points to it on
the course's repository. The pages load nothing from the network: no script
at all (nbconvert's pages would fetch require.js and MathJax from a CDN):
formulas are turned into plain text with sub- and superscripts (√d_k, QKᵀ,
Σ), good enough for the course's formulas; live panels show their text
representation and the static picture that follows each of them. Every
image keeps the description the plotting helpers stored as its alt text.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

import nbformat
from nbconvert import HTMLExporter

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def repository_url() -> str:
    """The course's public address, declared once in pyproject.toml."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    return re.search(r'^Repository\s*=\s*"([^"]+)"', text, re.M).group(1).rstrip("/")


def pages() -> dict[Path, str]:
    """Source file (relative to the repository) -> page name in the edition."""
    site = {Path("README.md"): "index.html", Path("notebooks/README.md"): "guide.html"}
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        site[path.relative_to(ROOT)] = f"{path.stem}.html"
    return site


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


def tex_to_text(tex: str) -> str:
    """A formula as text with <sub>/<sup>: $QK^\\top/\\sqrt{d_k}$ -> QKᵀ/√d<sub>k</sub>."""
    for pattern, replacement in _TEX_STEPS:
        tex = re.sub(pattern, replacement, tex, flags=re.S)
    for _ in range(6):  # innermost braces first: fractions, roots, scripts
        tex = re.sub(r"\\frac\{([^{}]*)\}\{([^{}]*)\}",
                     lambda m: f"{_group(m.group(1))}/{_group(m.group(2))}", tex)
        tex = re.sub(r"\\sqrt\{([^{}]*)\}", lambda m: "√" + _group(m.group(1)), tex)
        tex = re.sub(r"([_^])\{([^{}]*)\}", lambda m: _script(m.group(1), m.group(2)), tex)
    tex = re.sub(r"\\(sin|cos|exp|log)(?=[\\\w])", r"\1 ", tex)  # \cos\alpha -> cos α
    tex = re.sub(r"\\([A-Za-z]+)", lambda m: _SYMBOLS.get(m.group(1), m.group(1)), tex)
    tex = re.sub(r"([_^])(\w|[^\s<])", lambda m: _script(m.group(1), m.group(2)), tex)
    return re.sub(r"[{}]", "", tex).strip()


def _group(text: str) -> str:
    return f"({text})" if re.search(r"[\s+\-/·]", re.sub(r"<[^>]+>", "", text)) else text


def _script(kind: str, text: str) -> str:
    tag = "sub" if kind == "_" else "sup"
    return f"<{tag}>{text}</{tag}>"


def math_to_text(markdown: str) -> str:
    """Replace $...$ and $$...$$ outside code by readable text (display formulas on their own line)."""
    parts = re.split(r"(```.*?```|`[^`]*`)", markdown, flags=re.S)
    for k in range(0, len(parts), 2):  # the even parts are outside code
        parts[k] = re.sub(r"\$\$(.+?)\$\$", lambda m: f'\n<p class="formula">{tex_to_text(m.group(1))}</p>\n',
                          parts[k], flags=re.S)
        parts[k] = re.sub(r"\$((?:[^$\n]|\n(?!\s*\n))+)\$", lambda m: tex_to_text(m.group(1)), parts[k])
    return "".join(parts)


def as_notebook(source: Path):
    """The notebook to render: a notebook itself, or a markdown file as one markdown cell."""
    if source.suffix == ".ipynb":
        nb = nbformat.read(ROOT / source, as_version=4)
        nb.metadata.pop("widgets", None)  # the widget state: only a kernel can use it
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                cell.source = math_to_text(cell.source)
            for output in cell.get("outputs", []):
                # Without a kernel a live panel cannot run: show its text representation instead.
                output.get("data", {}).pop(WIDGET_VIEW, None)
        return nb
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_markdown_cell((ROOT / source).read_text(encoding="utf-8")))
    return nb


def rewrite_links(page: str, source: Path, site: dict[Path, str], repo: str) -> str:
    """Point relative links at the edition's pages, or at the repository for other files."""
    def target(match):
        href = match.group(2)
        parts = urlsplit(href)
        if parts.scheme or parts.netloc or not parts.path:
            return match.group(0)  # a web address, or an anchor in the same page
        fragment = f"#{parts.fragment}" if parts.fragment else ""
        try:
            path = (ROOT / source.parent / unquote(parts.path)).resolve().relative_to(ROOT)
        except ValueError:
            return match.group(0)  # outside the repository: left for the link check to report
        if path in site:
            return f'{match.group(1)}="{site[path]}{fragment}"'
        if (ROOT / path).exists():
            return f'{match.group(1)}="{repo}/blob/main/{path.as_posix()}{fragment}"'
        return match.group(0)
    return re.sub(r'\b(href)="([^"]*)"', target, page)


def github_anchors(page: str) -> str:
    """Give each heading also the id GitHub gives it ("#a-90-minute-lesson"), which the
    markdown links use, next to nbconvert's own ("#A-90-minute-lesson")."""
    seen: dict[str, int] = {}

    def add(match):
        text = re.sub(r"<[^>]+>", "", match.group(3)).replace("¶", "").strip().lower()
        slug = re.sub(r"[^\w\- ]", "", text).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        slug = f"{slug}-{count}" if count else slug
        return f'{match.group(1)}<span id="{slug}"></span>{match.group(3)}'

    return re.sub(r'(<h([1-6]) id="[^"]*">)(.*?)(?=</h\2>)', add, page, flags=re.S)


def drop_remote_images(page: str) -> str:
    """Replace an image from the web (a Binder badge) by its alt text: the edition loads nothing."""
    def text(match):
        alt = re.search(r'\balt="([^"]*)"', match.group(0))
        return alt.group(1) if alt else ""
    return re.sub(r'<img\b[^>]*\bsrc="https?://[^"]*"[^>]*>', text, page)


def build(out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    exporter = HTMLExporter(template_name="static_site", extra_template_basedirs=[str(ROOT / "scripts")])
    site, repo, written = pages(), repository_url(), []
    for source, name in site.items():
        title = "Teacher's guide" if name == "guide.html" else None
        nb = as_notebook(source)
        if title:
            nb.metadata["title"] = title
        elif source.suffix == ".md":
            nb.metadata["title"] = "Attention math, step by step"
        page, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": source.stem}})
        page = drop_remote_images(github_anchors(rewrite_links(page, source, site, repo)))
        (out_dir / name).write_text(page, encoding="utf-8")
        written.append(out_dir / name)
    printable = _printable_cheat_sheet()
    if printable is not None:
        (out_dir / "cheat_sheet_print.html").write_text(printable, encoding="utf-8")
        written.append(out_dir / "cheat_sheet_print.html")
    return written


def _printable_cheat_sheet():
    """The one-page cheat sheet from scripts/build_cheat_sheet.py, if that script is there."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import build_cheat_sheet
    except ModuleNotFoundError:
        return None
    finally:
        sys.path.pop(0)
    return build_cheat_sheet.render_html("a4")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python scripts/build_static_site.py OUT_DIR")
    for path in build(Path(sys.argv[1])):
        print(f"wrote {path}")
