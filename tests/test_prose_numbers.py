"""Prose that cannot go stale: every number the markdown states is an output.

A number in a markdown cell (a percentage, a score, a shape, a byte count)
must appear in the text of a compared output of the same notebook. If a
helper changes so that the number moves, nbval updates nothing in the prose,
and this test fails until the sentence is fixed.

Counted: numbers with a decimal point, a percent sign, or two or more digits
(single digits such as "row 2" or "3 tokens" are everywhere in the outputs
and would prove nothing). Not counted: link targets and notebook file names,
notebook numbers (00 to 06), model names such as GPT-2 or LLaMA-2-70B, LaTeX
exponents, and the explicit
allow-list below.
"""

import re

import pytest

from tools.notebooks import NOTEBOOKS, ids, read
from tools.prose import output_text, stated_numbers

# Numbers a notebook states that no cell computes, each with its reason.
ALLOWED = {
    "*": {
        "1706.03762",  # arXiv id of "Attention Is All You Need"
        "2017",  # its year
        "10000",  # the constant in the sinusoidal position formula, quoted from the paper
    },
    "05b": {
        "256", "3072",  # Gemma-7B: 16 heads of head_dim 256 on hidden_size 3072 (google/gemma-7b config.json)
        "128",  # notebook 10, Step 9: heads of d_head = 128 on d_model = 16 (tiny_model.SQRT_EXPERIMENT)
    },
    # The years of the papers in a notebook's "Sources" line (their arXiv ids sit in the links).
    "06": {"2019", "2023"},  # Shazeer 2019 (MQA), Ainslie et al. 2023 (GQA)
    "07": {
        "2020", "2021",  # Raffel et al. 2020 (T5); Su et al. 2021 (RoFormer), Press et al. 2021 (ALiBi)
        "500000",  # Llama 3's RoPE base (rope_theta in meta-llama/Meta-Llama-3-8B config.json)
    },
    "08": {"2016", "2019", "2020"},  # Ba et al., Hendrycks, Gimpel 2016; Zhang, Sennrich 2019; Shazeer 2020
    "09": {"2022"},  # Dao et al. 2022 (FlashAttention)
    "10": {"2014", "2022"},  # Kingma and Ba 2014 (Adam); Dao et al. 2022 (FlashAttention)
    "11": {"2019", "2023", "2024"},  # Shazeer 2019; Ainslie, Xiao, Kwon et al. 2023; DeepSeek-AI, Liu 2024
}

@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_every_number_in_the_prose_is_computed_in_an_output(path):
    nb = read(path)
    outputs = output_text(nb)
    allowed = ALLOWED["*"] | ALLOWED.get(path.stem.split("_")[0], set())
    missing = []
    for k, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown":
            continue
        for number in stated_numbers(cell.source):
            if number in allowed:
                continue
            if not re.search(rf"(?<![\d.]){re.escape(number)}(?!\d)", outputs):
                missing.append(f"cell {k}: {number}")
    assert not missing, f"{path.name} states numbers no compared output shows: {missing}"


def test_the_number_finder_sees_what_a_reader_sees():
    found = list(stated_numbers(
        "Token 5 takes **83.62%**, 3,555.56 in all, d_k = 512; see [03](03_scaling_by_sqrt_dk.ipynb), "
        "GPT-2 has 768 / 12 = 64; row 2; $e^{1.8}$"))
    assert found == ["83.62", "3555.56", "512", "768", "12", "64"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_no_markdown_argues_with_an_article_the_student_never_read(path):
    """Departures from the source article live in teachers/departures.md, not in a student's notebook."""
    found = [f"cell {k}" for k, cell in enumerate(read(path).cells)
             if cell.cell_type == "markdown" and re.search(r"\barticles?\b", cell.source, re.I)]
    assert not found, f"{path.name} mentions the article in {found}; say it in teachers/departures.md"
