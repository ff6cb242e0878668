"""Build the static HTML edition of the course: read it without a kernel.

    python -m scripts.build_static_site OUT_DIR              # the student edition
    python -m scripts.build_static_site OUT_DIR --teachers   # and the teachers' pages

Writes into OUT_DIR (flat, one folder):
- index.html         the project README
- notebooks.html     the students' list of notebooks (notebooks/README.md)
- NN_name.html       one page per notebook in notebooks/, with its stored outputs
- cheat_sheet.html   the cheat sheet notebook, and cheat_sheet_print.html, the printable page
- with --teachers:   teachers.html (teachers/README.md) and teachers_<name>.html for every
                     other file of teachers/ (teachers_notes_<name>.html for the notes)

The student edition, the default, has no teacher page and no link into
teachers/ or solutions/ (such a link keeps its text and loses its target), so
it can be published where students read it. Links between pages are
rewritten (.ipynb and .md to .html); a link to another file of the
repository (a test, a script) points to it on the course's repository, at
its release tag. The pages load nothing from the network (nbconvert's pages
would fetch require.js, MathJax and the widget manager from a CDN): formulas
are turned into plain text with sub- and superscripts (√d_k, QKᵀ, Σ), good
enough for the course's formulas. A live panel shows its first picture, drawn
from the numbers saved with the notebook (its widget state) by the same ES
module that draws it in JupyterLab, inlined in the page with a small
stand-in for the widget manager (static_site/panels.js); without JavaScript
the picture saved beside it (a PNG) shows instead, and the static twin
follows each panel as in the notebook. Every image keeps the description the
plotting helpers stored as its alt text.
"""

from __future__ import annotations

import argparse
import functools
import html
import json
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import nbformat
from nbconvert import HTMLExporter

from attention_helpers.alt_text import tex_to_text
from scripts import set_repository

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
PANELS_JS = Path(__file__).resolve().parent / "static_site" / "panels.js"


def repository_url() -> str:
    """The course's public address, declared once in pyproject.toml (read by set_repository)."""
    return f"https://github.com/{set_repository.repository()}"


TEACHERS_ONLY = ("teachers", "solutions")  # folders the student edition never links to


def pages(teachers: bool = False) -> dict[Path, str]:
    """Source file (relative to the repository) -> page name in the edition."""
    site = {Path("README.md"): "index.html", Path("notebooks/README.md"): "notebooks.html"}
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        site[path.relative_to(ROOT)] = f"{path.stem}.html"
    if teachers:
        for path in sorted((ROOT / "teachers").rglob("*.md")):
            relative = path.relative_to(ROOT)
            parts = relative.with_suffix("").parts  # ("teachers", "notes", "00_input_matrix")
            name = "teachers" if parts == ("teachers", "README") else "_".join(parts)
            site[relative] = f"{name}.html"
    return site


def teachers_only(path: Path) -> bool:
    return path.parts[:1] and path.parts[0] in TEACHERS_ONLY


def math_to_text(markdown: str) -> str:
    """Replace $...$ and $$...$$ outside code by readable text (display formulas on their own line)."""
    def html(match):
        return tex_to_text(match.group(1), html=True)

    parts = re.split(r"(```.*?```|`[^`]*`)", markdown, flags=re.S)
    for k in range(0, len(parts), 2):  # the even parts are outside code
        parts[k] = re.sub(r"\$\$(.+?)\$\$", lambda m: f'\n<p class="formula">{html(m)}</p>\n', parts[k],
                          flags=re.S)
        parts[k] = re.sub(r"\$((?:[^$\n]|\n(?!\s*\n))+)\$", html, parts[k])
    return "".join(parts)


def browser_views(state: dict, model_id: str) -> list[str]:
    """The browser views (attention_helpers.browser_view.BrowserView) a widget holds, in the
    saved widget state: a panel is a box of sliders and its view."""
    model = state.get(model_id, {})
    if model.get("state", {}).get("_anywidget_id") == "attention_helpers.browser_view.BrowserView":
        return [model_id]
    children = model.get("state", {}).get("children", [])
    return [found for child in children for found in browser_views(state, child.removeprefix("IPY_MODEL_"))]


def saved_view(model: dict) -> dict:
    """What panels.js needs of a saved BrowserView: its traits, its numbers in base64."""
    traits = model["state"]
    values = next((b["data"] for b in model.get("buffers", []) if b["path"] == ["values"]), "")
    return {"spec": traits["spec"], "extras": traits.get("extras", {}),
            "description": traits.get("description", ""), "values": values,
            "_esm": traits["_esm"], "_css": traits.get("_css", "")}


def panel_html(views: list[str], output) -> str:
    """A live panel on the static page: its sentence, a holder per browser view (panels.js draws
    the picture there), and the saved picture, shown where no script runs."""
    data = output.get("data", {})
    sentence = html.escape(data.get("text/plain", ""))
    png = data.get("image/png")
    alt = html.escape(output.get("metadata", {}).get("image/png", {}).get("alt", ""), quote=True)
    fallback = f'<img class="ah-fallback" src="data:image/png;base64,{png}" alt="{alt}">' if png else ""
    holders = "".join(f'<div class="ah-static-panel" data-view="{v}">{fallback if k == 0 else ""}</div>'
                      for k, v in enumerate(views))
    return f'<p class="ah-panel-sentence">{sentence}</p>{holders}'


def as_notebook(source: Path):
    """The notebook to render: a notebook itself, or a markdown file as one markdown cell. A live
    panel's output becomes its picture (panel_html), and the views it draws go into the
    notebook's metadata ("ah_views"), for `exported` to put into the page."""
    if source.suffix == ".ipynb":
        nb = nbformat.read(ROOT / source, as_version=4)
        widgets = nb.metadata.pop("widgets", {})  # the widget state: the panels' saved numbers
        state = widgets.get(WIDGET_STATE, {}).get("state", {})
        shown = {}
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                cell.source = math_to_text(cell.source)
            for output in cell.get("outputs", []):
                view = output.get("data", {}).pop(WIDGET_VIEW, None)
                views = browser_views(state, view["model_id"]) if view else []
                if views:
                    shown.update({v: saved_view(state[v]) for v in views})
                    output["data"] = {"text/html": panel_html(views, output)}
                    output["metadata"] = {}
        nb.metadata["ah_views"] = shown
        return nb
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_markdown_cell((ROOT / source).read_text(encoding="utf-8")))
    return nb


def unlink_teachers_only(page: str, source: Path, repo: str) -> str:
    """The student edition: a link into teachers/ or solutions/ (relative, or on the course's
    repository) keeps its text and loses its target."""
    def text(match):
        href = match.group(1)
        parts = urlsplit(href)
        if href.startswith(repo + "/"):
            path = Path(href[len(repo) + 1:].split("/", 2)[-1]) if "/blob/" in href or "/tree/" in href \
                else Path(href[len(repo) + 1:])
        elif parts.scheme or parts.netloc or not parts.path:
            return match.group(0)
        else:
            try:
                path = (ROOT / source.parent / unquote(parts.path)).resolve().relative_to(ROOT)
            except ValueError:
                return match.group(0)
        return match.group(2) if teachers_only(path) else match.group(0)
    return re.sub(r'<a\b[^>]*\bhref="([^"]*)"[^>]*>(.*?)</a>', text, page, flags=re.S)


def rewrite_links(page: str, source: Path, site: dict[Path, str], repo: str) -> str:
    """Point relative links at the edition's pages, or at the repository (at the release tag)
    for other files."""
    tag = set_repository.release_tag()
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
            return f'{match.group(1)}="{repo}/blob/{tag}/{path.as_posix()}{fragment}"'
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


@functools.lru_cache(maxsize=None)
def exported(source: Path, modified: int) -> str:
    """nbconvert's page for `source` (a path relative to the root, last `modified` at that time in
    ns). Both editions start from the same pages, so a process that builds both (the tests do)
    exports each file once: nbconvert takes most of a build."""
    nb = as_notebook(source)
    if source.suffix == ".md":
        first = re.search(r"^# (.+)$", (ROOT / source).read_text(encoding="utf-8"), re.M)
        nb.metadata["title"] = first.group(1) if first else "Attention math, step by step"
    exporter = HTMLExporter(template_name="static_site", extra_template_basedirs=[str(ROOT / "scripts")])
    page = exporter.from_notebook_node(nb, resources={"metadata": {"name": source.stem}})[0]
    return with_panels(page, nb.metadata.get("ah_views", {}))


def with_panels(page: str, views: dict) -> str:
    """The page with what its panels' pictures need, inline (nothing fetched): the saved views
    as JSON, the browser view's style and ES module (as saved with them), and panels.js."""
    if not views:
        return page
    first = next(iter(views.values()))
    data = {k: {key: v for key, v in view.items() if not key.startswith("_")} for k, view in views.items()}
    inline = lambda text: text.replace("</", "<\\/")  # noqa: E731 - nothing in it may end the script
    scripts = (f"<style>{first['_css']}</style>\n"
               f'<script type="application/json" id="ah-views">{inline(json.dumps(data))}</script>\n'
               f'<script type="module">\n{inline(first["_esm"])}\n{inline(PANELS_JS.read_text())}</script>\n')
    return page.replace("</body>", scripts + "</body>", 1)


def build(out_dir: Path, teachers: bool = False) -> list[Path]:
    """Write the edition into `out_dir`: the student edition, or with `teachers` the teachers' pages too."""
    out_dir.mkdir(parents=True, exist_ok=True)
    site, repo, written = pages(teachers), repository_url(), []
    for source, name in site.items():
        page = exported(source, (ROOT / source).stat().st_mtime_ns)
        page = rewrite_links(page, source, site, repo)
        if not teachers:
            page = unlink_teachers_only(page, source, repo)
        page = drop_remote_images(github_anchors(page))
        (out_dir / name).write_text(page, encoding="utf-8")
        written.append(out_dir / name)
    printable = _printable_cheat_sheet()
    if printable is not None:
        (out_dir / "cheat_sheet_print.html").write_text(printable, encoding="utf-8")
        written.append(out_dir / "cheat_sheet_print.html")
    return written


def _printable_cheat_sheet():
    """The one-page cheat sheet from scripts/build_cheat_sheet.py."""
    from scripts import build_cheat_sheet

    return build_cheat_sheet.render_html("a4")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", type=Path, help="the folder to write the pages into")
    parser.add_argument("--teachers", action="store_true",
                        help="add the teachers' pages (plans, notes, answers): for a teacher's own site")
    args = parser.parse_args(argv)
    for path in build(args.out_dir, teachers=args.teachers):
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
