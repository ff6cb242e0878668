"""The exit tickets and the answers of the teachers' kit: what they cite, what they ask, what
they answer.

- Every step a ticket, an answer, a note or a plan cites ("Step 4", "Steps 1–3", "Step 3b",
  "10's Step 1", "*(01 · Step 2 · Three weight matrices)*") exists in the notebook it names, or
  in the note's or section's own notebook, with the heading it claims; "the panel (Step 8)"
  must be the step that holds the notebook's panel. The headings are read from the notebooks.
- No exit-ticket question repeats an in-class question: it shares no run of six words with a
  question the plans or the notes ask, or with a notebook's written question, try-this or
  exercises, and no list of three numbers or more with a notebook or a note (new numbers).
- Every stop-and-ask question of a plan is written word for word in its notebook's note, under
  "At the steps" or "At the panel", with its answer; every question there has one.
- The answers to the tickets state the numbers computed here, and no ticket asks for what needs
  a calculator ("to three decimals") unless it says so.
"""

from __future__ import annotations

import re
from fractions import Fraction

import numpy as np
import pytest

import attention_helpers as ah
from tools.lesson_plans import (
    PLANS,
    TEACHERS,
    citation_problems,
    in_class_material,
    in_class_questions,
    kit_citations,
    kit_files,
    longest_shared_run,
    note_path,
    note_questions,
    number_lists,
    slots,
    ticket,
)

REPEAT = 6  # words in a row that a ticket may not share with an in-class question


# ---- steps cited ---------------------------------------------------------------------------------------

def test_every_step_the_kit_cites_exists_with_the_heading_it_claims():
    cited = kit_citations()
    kinds = {c.where.split(":")[0].split("/")[0] for c in cited}
    assert {"notes", "answers.md", "plan_90_minutes.md", "plan_half_day.md"} <= kinds
    assert len(cited) >= 150
    notes = {f"notes/{p.name}" for p in (TEACHERS / "notes").glob("*.md")}
    assert {c.where.split(":")[0] for c in cited if c.panel} >= notes  # a panel claim in every note
    assert citation_problems(cited) == []


def test_each_ticket_reference_names_its_notebook_step_and_heading():
    for plan in PLANS:
        for question, refs in ticket(plan.read_text(encoding="utf-8")):
            assert refs and all(step and heading for _, step, heading in refs), (
                f"{plan.name}: {question[:50]!r} should cite *(NN · Step k · its heading)*")


def test_a_wrong_step_reference_is_found():
    """The check fails where it should: the old ticket's reference (shapes are taught in 01's
    Step 2, not Step 3), a step that does not exist, a panel claimed at the wrong step, another
    notebook's step, a sub-step, and a step in answers.md that names no notebook."""
    files = kit_files()

    def problems(name, old, new):
        assert old in files[name], (name, old)
        return citation_problems(kit_citations({**files, name: files[name].replace(old, new)}))

    assert problems("plan_90_minutes.md", "*(01 · Step 2 · Three weight matrices;",
                    "*(01 · Step 3 · Three weight matrices;") == [
        "plan_90_minutes.md: 1. X has shape [6, 10]; W_Q and W_K are [10, 3], W: "
        "01 · Step 3 is 'One row of Q by hand', not 'Three weight matrices'"]
    assert problems("plan_half_day.md", "*(06 · Step 4 · How big", "*(06 · Step 9 · How big")[0].endswith(
        "06 has no Step 9")
    assert problems("notes/08_the_decoder_block.md", "The panel (Step 7)", "The panel (Step 8)") == [
        "notes/08_the_decoder_block.md: The panel (Step 8) has sliders for the decoding st: 08 has no Step 8"]
    assert problems("notes/08_the_decoder_block.md", "The panel (Step 7)", "The panel (Step 6)") == [
        "notes/08_the_decoder_block.md: The panel (Step 6) has sliders for the decoding st: "
        "08 · Step 6 holds no panel"]
    assert problems("notes/03_scaling_by_sqrt_dk.md", "10's Step 1", "10's Step 12")[0].endswith(
        "10 has no Step 12")
    assert problems("notes/06_kv_cache_gqa.md", "(Step 3b,", "(Step 3c,")[0].endswith("06 has no Step 3c")
    assert problems("notes/05_weighted_sum_and_self_attention.md", "(Step 6)", "(Steps 6–7)")[0].endswith(
        "05 has no Step 7")
    heading = "## Exit ticket of the half-day workshop\n"
    bare = problems("answers.md", heading, heading + "\nStep 4 shows it.\n")
    assert bare == ["answers.md: Step 4 shows it.: Step 4 of no notebook named, which does not exist"]


# ---- what the tickets ask ----------------------------------------------------------------------------------

def repeats(question: str, asked: list[tuple[str, str]], material: str) -> list[str]:
    """Where `question` repeats an in-class question: a run of REPEAT words or more in common, or a
    list of three numbers or more that the notebooks or notes already use."""
    found = []
    for where, text in asked:
        length, run = longest_shared_run(question, text)
        if length >= REPEAT:
            found.append(f"{length} words of {where}: {run!r}")
    found += [f"the numbers {numbers} of the notebooks or notes"
              for numbers in sorted(number_lists(question) & number_lists(material))]
    return found


@pytest.fixture(scope="module")
def in_class():
    return in_class_questions(), in_class_material()


@pytest.mark.parametrize("plan", PLANS, ids=lambda p: p.stem)
def test_no_ticket_repeats_an_in_class_question(plan, in_class):
    asked, material = in_class
    assert len(asked) >= 100  # the plans' and notes' questions, and each notebook's own
    questions = ticket(plan.read_text(encoding="utf-8"))
    found = {q[:50]: r for q, _ in questions if (r := repeats(q, asked, material))}
    assert found == {}, f"{plan.name}: tickets that repeat what the class was asked: {found}"


def test_a_repeated_question_is_found(in_class):
    asked, material = in_class
    copied = "Then do the same at T = 10. Set T = 0.1 and move score 4 from 7.9 to 8.1."
    assert repeats(copied, asked, material)[0].startswith("11 words of")
    old_q4 = ("Scores [3.2, 4.0, 1.0, 6.2, 8.0]: what do the weights look like at T = 0.1 and at "
              "T = 10, and can a temperature change which token wins?")  # the ticket this replaced
    assert repeats(old_q4, asked, material) == ["the numbers 3.2,4.0,1.0,6.2,8.0 of the notebooks or notes"]
    assert repeats("Give the shapes of Q, K and V for 6 tokens.", asked, material) == []


@pytest.mark.parametrize("plan", PLANS, ids=lambda p: p.stem)
def test_no_ticket_needs_a_calculator_unless_it_says_so(plan):
    for question, _ in ticket(plan.read_text(encoding="utf-8")):
        if re.search(r"decimal|\bexp\(|e\^\d|\blog\b", question):
            assert "calculator" in question, f"{plan.name}: {question[:60]!r} needs a calculator"


# ---- the questions asked in class, and their answers -------------------------------------------------------

def unanswered(plans: dict[str, str], notes: dict[str, str]) -> list[str]:
    """Stop-and-ask questions of the plans not in their note, and notes' questions with no answer."""
    problems = []
    for name, text in plans.items():
        for slot in slots(text):
            for _, question in slot["asks"]:
                number = slot["notebook"][0] if slot["notebook"] else None
                answers = note_questions(notes.get(number, ""))
                if question not in answers:
                    problems.append(f"{name}: {question[:40]!r} is in no question of the note of {number}")
    for number, text in notes.items():
        for question, answer in note_questions(text).items():
            if len(answer.split()) < 3:
                problems.append(f"note of {number}: {question[:40]!r} has no answer")
    return problems


def _plans_and_notes():
    plans = {p.name: p.read_text(encoding="utf-8") for p in PLANS}
    notes = {p.name.split("_")[0]: p.read_text(encoding="utf-8")
             for p in sorted((TEACHERS / "notes").glob("*.md"))}
    return plans, notes


def test_every_stop_and_ask_question_has_its_answer_in_its_notebooks_note():
    plans, notes = _plans_and_notes()
    assert unanswered(plans, notes) == []
    for number in ("00", "01", "02"):  # the questions at the steps, not at a panel
        assert "## At the steps" in note_path(number).read_text(encoding="utf-8")
    assert sum(len(note_questions(text)) for text in notes.values()) >= 40


def test_a_question_without_an_answer_is_found():
    plans, notes = _plans_and_notes()
    asked = '*Drag one slider of the "The" row (row 0). Which rows change in X, and which in X₁?*'
    reworded = plans["plan_half_day.md"].replace(asked, "*Set it all to 0?*")
    assert unanswered({**plans, "plan_half_day.md": reworded}, notes) == [
        "plan_half_day.md: 'Set it all to 0?' is in no question of the note of 00"]
    question = "*Set every slider to 0. Is X₁ zero?*"
    cut = notes["00"].replace(question + " No: X₀ is then just P", question + "\n\n- No: X₀ is then just P")
    assert unanswered(plans, {**notes, "00": cut}) == [
        "note of 00: 'Set every slider to 0. Is X₁ zero?' has no answer"]


# ---- the answers' numbers ----------------------------------------------------------------------------------

def ticket_answers(heading: str) -> dict[int, str]:
    text = (TEACHERS / "answers.md").read_text(encoding="utf-8")
    section = text[text.index(heading):]
    section = section[:section.index("\n## ", 1)]
    found = re.findall(r"^(\d+)\. (.*?)(?=^\d+\. |\Z)", section, re.M | re.S)
    return {int(n): " ".join(a.split()) for n, a in found}


def spaced(n: int) -> str:
    return f"{n:,}".replace(",", " ")


def fractions(weights, denominator: int) -> str:
    found = [Fraction(float(w)).limit_denominator(denominator) for w in weights]
    assert np.allclose([float(f) for f in found], weights)
    return "[" + ", ".join(f"{f.numerator}/{f.denominator}" if f.denominator > 1 else str(f.numerator)
                           for f in found) + "]"


def test_the_ticket_answers_state_the_computed_numbers():
    a90, half = ticket_answers("## Exit ticket of the 90-minute lesson"), ticket_answers(
        "## Exit ticket of the half-day workshop")
    # shapes
    X, W_QK, W_V = np.zeros((6, 10)), np.zeros((10, 3)), np.zeros((10, 5))
    Q, V = X @ W_QK, X @ W_V
    A, wide = ah.softmax(Q @ Q.T), X @ np.zeros((10, 8))
    for shape in (Q.shape, V.shape, (Q @ Q.T).shape, wide.shape):
        assert f"[{shape[0]}, {shape[1]}]" in a90[1]
    for shape in (Q.shape, V.shape, A.shape, (A @ V).shape, (A @ wide).shape):
        assert f"[{shape[0]}, {shape[1]}]" in half[1]
    # scores, lengths and the angle
    q, K = np.array([1.0, 2.0]), np.array([[1.0, 2.0], [4.0, 1.0], [-2.0, 1.0]])
    scores, lengths = K @ q, np.linalg.norm(K, axis=1)
    cos = scores / (np.linalg.norm(q) * lengths)
    assert [f"= {s:g}" in a90[2] for s in scores] == [True] * 3
    assert f"√5 ≈ {lengths[0]:.2f}" in a90[2] and f"√17 ≈ {lengths[1]:.2f}" in a90[2]
    assert f"{np.degrees(np.arccos(cos[1])):.1f}°" in a90[2] and f"6/√85 ≈ {cos[1]:.3f}" in a90[2]
    # a score's variance, sampled as 03 does: about d_k, and about 1 once divided by √d_k
    d_k, rng = 100, np.random.default_rng(0)
    dots = (rng.standard_normal((20000, d_k)) * rng.standard_normal((20000, d_k))).sum(axis=1)
    assert abs(dots.var() / d_k - 1) < 0.05 and abs((dots / np.sqrt(d_k)).var() - 1) < 0.05
    assert f"variance is {d_k}" in a90[3] and f"√{d_k} = {int(np.sqrt(d_k))}" in a90[3]
    # softmax as fractions, and at T = 1/2
    s = np.log([4.0, 2.0, 2.0, 1.0])
    p1, p_half = ah.softmax(s), ah.softmax(s / 0.5)
    assert fractions(p1, 9) in a90[4] and fractions(p_half, 25) in a90[4]
    assert "[" + ", ".join(f"{x:.2f}" for x in p_half) + "]" in a90[4]
    assert half[2] == "As question 4 above."
    # the causal mask and the weighted sum
    masked = np.where([True, True, False], [0.0, np.log(3.0), 5.0], -np.inf)
    w = ah.softmax(masked)
    values = np.array([[4.0, 0.0], [0.0, 8.0], [2.0, 4.0]])
    out = w @ values
    assert fractions(w, 4) in half[3]
    assert f"[{out[0]:g}, {out[1]:g}]" in half[3]
    assert f"≈ {ah.softmax(np.array([0.0, np.log(3.0), 5.0]))[2]:.3f}" in half[3]
    # the KV cache
    per_token = ah.kv_cache_bytes(n_layers=16, n_kv_heads=4, d_head=64, seq_len=1, bytes_per_value=2)
    mha = ah.kv_cache_bytes(n_layers=16, n_kv_heads=16, d_head=64, seq_len=1, bytes_per_value=2)
    for stated in (f"{spaced(per_token)} bytes", f"{spaced(2**30 // per_token)} tokens",
                   f"{spaced(mha)} bytes", f"{spaced(2**30 // mha)} tokens"):
        assert stated in half[4], stated
