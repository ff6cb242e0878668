"""The static HTML edition (scripts/build_static_site.py) reads well without a kernel.

Built once per run into a temporary folder, both editions: the student edition
(the default) has no teacher page and no link into teachers/ or solutions/; the
teachers' edition (--teachers) adds a page per file of teachers/. Then checked
page by page: every image has a specific alt text, each page has one H1 and no
skipped heading level, every relative link (and its #anchor) resolves, and
nothing is loaded from the network. The checkers are tested on pages that
break each rule.
"""

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from attention_helpers.alt_text import tex_to_text
from scripts import build_static_site, set_repository
from tools.pictures import DOM_FACTS, facts_from_saved

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.static

NBCONVERT_DEFAULT_ALT = "No description has been provided for this image"


class Page(HTMLParser):
    """What the checks need from one HTML page: images, headings, links, ids, scripts."""

    def __init__(self, text: str):
        super().__init__()
        self.text = text
        self.images, self.headings, self.links, self.ids, self.loads = [], [], [], set(), []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.update({attrs["id"], unquote(attrs["id"])})
        if tag == "img":
            self.images.append(attrs)
        if re.fullmatch(r"h[1-6]", tag):
            self.headings.append(int(tag[1]))
        if tag == "a" and "href" in attrs:
            self.links.append(attrs["href"])
        if (tag == "script" and attrs.get("src")) or (
                tag in ("img", "iframe", "link", "source")
                and re.match(r"https?:", attrs.get("src") or attrs.get("href") or "")
                and not (tag == "link" and attrs.get("rel") not in ("stylesheet", None))):
            self.loads.append(f"<{tag} {attrs}>")  # a script may be inline, never fetched


def alt_problems(page: Page) -> list[str]:
    problems = []
    for image in page.images:
        alt = (image.get("alt") or "").strip()
        if not alt:
            problems.append("an image without alt text")
        elif alt == NBCONVERT_DEFAULT_ALT or alt.startswith("<Figure") or len(alt) < 15:
            problems.append(f"an image whose alt text says nothing specific: {alt!r}")
    return problems


def heading_problems(page: Page) -> list[str]:
    problems = []
    if page.headings.count(1) != 1:
        problems.append(f"{page.headings.count(1)} H1 headings, not exactly one")
    if page.headings and page.headings[0] != 1:
        problems.append(f"the first heading is H{page.headings[0]}, not H1")
    for before, after in zip(page.headings, page.headings[1:]):
        if after > before + 1:
            problems.append(f"H{before} followed by H{after}: a level is skipped")
    return problems


def link_problems(page: Page, site: dict[str, Page]) -> list[str]:
    problems = []
    for href in page.links:
        parts = urlsplit(href)
        if parts.scheme or parts.netloc:
            continue
        target = site.get(unquote(parts.path)) if parts.path else page
        if target is None:
            problems.append(f"{href}: no such page in the edition")
        elif parts.fragment and not {parts.fragment, unquote(parts.fragment)} & target.ids:
            problems.append(f"{href}: no element with id {parts.fragment!r} there")
    return problems


@pytest.fixture(scope="module")
def site_folder(tmp_path_factory):
    out = tmp_path_factory.mktemp("static")
    build_static_site.main([str(out)])
    return out


@pytest.fixture(scope="module")
def site(site_folder):
    return {path.name: Page(path.read_text(encoding="utf-8")) for path in site_folder.glob("*.html")}


@pytest.fixture(scope="module")
def teachers_site(tmp_path_factory):
    out = tmp_path_factory.mktemp("static-teachers")
    build_static_site.main([str(out), "--teachers"])
    return {path.name: Page(path.read_text(encoding="utf-8")) for path in out.glob("*.html")}


NOTEBOOK_PAGES = [f"{p.stem}.html" for p in sorted((ROOT / "notebooks").glob("*.ipynb"))]
TEACHER_PAGES = sorted(name for path, name in build_static_site.pages(teachers=True).items()
                       if path.parts[0] == "teachers")


def test_the_edition_has_a_page_per_notebook_plus_the_list_and_the_readme(site):
    assert NOTEBOOK_PAGES, "no notebooks found"
    missing = [name for name in NOTEBOOK_PAGES + ["index.html", "notebooks.html"] if name not in site]
    assert not missing, f"pages missing from the static edition: {missing}"


def test_the_student_edition_has_no_teacher_page_and_no_link_to_answers(site):
    assert "teachers.html" in TEACHER_PAGES and len(TEACHER_PAGES) >= 8
    assert not set(TEACHER_PAGES) & set(site)
    leaks = {name: [href for href in page.links
                    if re.search(r"(^|/)(teachers|solutions)(/|\.html|$)|^teachers", href)]
             for name, page in site.items()}
    assert not {name: hrefs for name, hrefs in leaks.items() if hrefs}, "links into teachers/ or solutions/"


def test_the_teachers_edition_adds_every_teacher_page_and_its_links_resolve(teachers_site):
    missing = [name for name in TEACHER_PAGES if name not in teachers_site]
    assert not missing, f"teacher pages missing: {missing}"
    for name in TEACHER_PAGES:
        page = teachers_site[name]
        assert not heading_problems(page), f"{name}: {heading_problems(page)}"
        assert not link_problems(page, teachers_site), f"{name}: {link_problems(page, teachers_site)}"
        assert not page.loads, name
    index = teachers_site["teachers.html"]
    assert any(href.endswith("teachers_plan_90_minutes.html") for href in index.links)


def test_unlinking_keeps_the_text_and_drops_the_target():
    repo = build_static_site.repository_url()
    page = (f'<a href="../teachers/answers.md">the answers</a> <a href="{repo}/blob/v1/solutions/nb00.py">'
            'nb00</a> <a href="00_input_matrix.html">00</a>')
    assert build_static_site.unlink_teachers_only(page, Path("notebooks/README.md"), repo) == (
        'the answers nb00 <a href="00_input_matrix.html">00</a>')


@pytest.mark.parametrize("name", NOTEBOOK_PAGES)
def test_every_image_has_a_specific_alt_text(site, name):
    assert not alt_problems(site[name]), f"{name}: {alt_problems(site[name])}"


def test_the_notebooks_have_images_to_check(site):
    assert sum(len(site[name].images) for name in NOTEBOOK_PAGES) >= len(NOTEBOOK_PAGES)


@pytest.mark.parametrize("name", NOTEBOOK_PAGES + ["notebooks.html", "index.html"])
def test_one_h1_and_no_skipped_heading_level(site, name):
    assert not heading_problems(site[name]), f"{name}: {heading_problems(site[name])}"


@pytest.mark.parametrize("name", NOTEBOOK_PAGES + ["notebooks.html", "index.html", "cheat_sheet_print.html"])
def test_every_relative_link_resolves(site, name):
    assert not link_problems(site[name], site), f"{name}: {link_problems(site[name], site)}"


def test_links_to_other_repository_files_point_at_files_that_exist_at_the_tag(teachers_site):
    repo = f"{build_static_site.repository_url()}/blob/{set_repository.release_tag()}/"
    targets = {href[len(repo):].split("#")[0] for page in teachers_site.values() for href in page.links
               if href.startswith(repo)}
    assert targets, "the teachers' pages link to repository files; those links should point at the repository"
    missing = sorted(t for t in targets if not (ROOT / t).exists())
    assert not missing, f"links to repository files that do not exist: {missing}"


def test_the_pages_load_nothing_from_the_network(site):
    loads = {name: page.loads for name, page in site.items() if page.loads}
    assert not loads, f"pages that run scripts or fetch from the web: {loads}"


def test_live_panels_are_not_left_as_empty_widget_placeholders(site):
    # Without a kernel no widget manager runs: each panel is a holder of its first picture instead.
    placeholders = [name for name, page in site.items() if "widget-view+json" in page.text]
    assert not placeholders, f"pages with live-widget placeholders that stay empty: {placeholders}"
    for name in NOTEBOOK_PAGES:
        if name.startswith("cheat"):
            continue
        text = site[name].text
        holders = re.findall(r'class="ah-static-panel" data-view="([0-9a-f]+)">(<img[^>]*"ah-fallback")?',
                             text)
        assert holders and holders[0][1], f"{name}: no panel with its saved picture"
        saved = json.loads(re.search(r'<script type="application/json" id="ah-views">(.*?)</script>',
                                     text, re.S).group(1))
        assert {view for view, _ in holders} <= set(saved), f"{name}: a panel without its saved numbers"


@pytest.mark.browser
def test_each_panel_shows_its_first_picture_without_a_kernel(site_folder, browser):
    """The static pages in Chromium, from files (no server): each panel is drawn from its saved numbers
    by the browser view's module, showing what those numbers give with matplotlib's colour maps and
    the helper's number format (tools/pictures.py); nothing is fetched and nothing fails."""
    page = browser.new_page()
    problems, fetched = [], []
    page.on("console", lambda m: m.type == "error" and problems.append(m.text))
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("request", lambda r: r.url.startswith(("http:", "https:")) and fetched.append(r.url))
    for name in NOTEBOOK_PAGES:
        if name.startswith("cheat"):
            continue
        page.goto((site_folder / name).as_uri())
        saved = json.loads(page.inner_text("#ah-views"))
        for holder in page.query_selector_all(".ah-static-panel"):
            view = holder.get_attribute("data-view")
            drawn = holder.evaluate(f"h => ({DOM_FACTS})(h)")
            assert drawn and drawn["svg"] and drawn["frame"] == 1, f"{name}: panel {view} not drawn"
            assert holder.query_selector(".ah-fallback") is None  # drawn: the saved PNG made way
            want = facts_from_saved(saved[view])
            assert len(drawn["charts"]) == len(want["charts"]), f"{name}: panel {view}"
            for k, (shown, expected) in enumerate(zip(drawn["charts"], want["charts"])):
                assert {key: shown[key] for key in expected} == expected, f"{name}: panel {view}, chart {k}"
            assert [t.strip() for t in drawn["texts"]] == [("\n".join(want["texts"])).strip()] * bool(
                want["texts"]), f"{name}: panel {view}'s read-out"
    page.close()
    assert not problems and not fetched, (problems, fetched)


def test_formulas_are_readable_without_mathjax():
    import nbformat

    left = {}
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for k, cell in enumerate(nbformat.read(path, as_version=4).cells):
            if cell.cell_type == "markdown":
                text = build_static_site.math_to_text(cell.source)
                text = re.sub(r"```.*?```|`[^`]*`", "", text, flags=re.S)
                if re.search(r"\$|\\[A-Za-z]", text):
                    left[f"{path.name} cell {k}"] = text[:200]
    assert not left, f"TeX left in the static edition: {left}"


@pytest.mark.parametrize("tex, text", [
    (r"\mathrm{softmax}\!\left(\frac{QK^{\top}}{\sqrt{d_k}}\right)", "softmax(QKᵀ/√d<sub>k</sub>)"),
    (r"p_i = e^{s_i} / \sum_j e^{s_j}",
     "p<sub>i</sub> = e<sup>s<sub>i</sub></sup> / Σ<sub>j</sub> e<sup>s<sub>j</sub></sup>"),
    (r"d_{head} = d_{model}/n_{heads}", "d<sub>head</sub> = d<sub>model</sub>/n<sub>heads</sub>"),
    (r"X \in \mathbb{R}^{n_\text{tokens} \times d_\text{model}}",
     "X ∈ ℝ<sup>n<sub>tokens</sub> × d<sub>model</sub></sup>"),
])
def test_tex_becomes_text_with_sub_and_superscripts(tex, text):
    assert tex_to_text(tex, html=True) == text  # what the static pages show


def test_math_in_code_is_left_alone():
    assert build_static_site.math_to_text("cost $d_k$, code `$d_k$`") == "cost d<sub>k</sub>, code `$d_k$`"


# ---- the checkers themselves fail on pages that break the rules -------------

def test_the_checkers_catch_a_bad_page():
    bad = Page(
        '<h2>no title</h2><h1>A</h1><h1>B</h1><h4>skipped</h4>'
        f'<img src="data:,"><img alt="{NBCONVERT_DEFAULT_ALT}"><img alt="Heatmap of weights: row fish 1.00">'
        '<a href="gone.html">x</a><a href="#nowhere">y</a><a href="good.html#there">z</a>'
        '<a href="https://example.org/">web</a><script src="https://cdn.example/x.js"></script>'
    )
    good = Page('<h1 id="there">Good</h1>')
    assert len(alt_problems(bad)) == 2
    assert heading_problems(bad) == ["2 H1 headings, not exactly one", "the first heading is H2, not H1",
                                     "H1 followed by H4: a level is skipped"]
    assert link_problems(bad, {"good.html": good}) == [
        "gone.html: no such page in the edition", "#nowhere: no element with id 'nowhere' there"]
    assert len(bad.loads) == 1
    assert not heading_problems(good) and not alt_problems(good)
