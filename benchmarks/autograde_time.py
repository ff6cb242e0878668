"""How long `nbgrader autograde` takes for a class's hand-ins on one CPU, as in a teacher's pod.

    python -m benchmarks.autograde_time [--notebooks 05 10] [--students 30]

Writes the nbgrader course (scripts/make_nbgrader_course.py, the teacher's own config) into a
temporary folder, hands in the reference solutions as N students, and runs
`nbgrader autograde ASSIGNMENT` pinned to one CPU (Linux), in nbgrader's own environment
(tools/grading.py). Prints per assignment the wall time of one student's hand-in and of N
students' in the same run, and the time per hand-in. Each hand-in runs every cell of its
notebook in a fresh kernel, figures included.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scripts import make_nbgrader_course as COURSE_MAKER
from tools.grading import BIN, grading_env, hand_in, nbgrader, reference_answers


def autograde_seconds(env: dict, course: Path, assignment: str, *options: str) -> float:
    """Wall seconds of one `nbgrader autograde --force ASSIGNMENT OPTIONS`, on CPU 0."""
    pin = (lambda: os.sched_setaffinity(0, {0})) if hasattr(os, "sched_setaffinity") else None
    start = time.perf_counter()
    subprocess.run([str(BIN / "nbgrader"), "autograde", "--force", assignment, *options],
                   cwd=course, env=env, check=True, capture_output=True, preexec_fn=pin)
    return time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notebooks", nargs="*", default=None, metavar="NN")
    parser.add_argument("--students", type=int, default=30)
    args = parser.parse_args(argv)
    notebooks = COURSE_MAKER.exercise_notebooks()
    if args.notebooks:
        notebooks = [p for p in notebooks if p.name.split("_")[0] in args.notebooks]
    env = grading_env()
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; nbgrader autograde on one CPU")
    print(f"| assignment | 1 hand-in, s | {args.students} hand-ins, s | s per hand-in |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for path in notebooks:
            course = Path(tmp) / path.stem
            COURSE_MAKER.write_course(course, [path])
            nbgrader(env, course, "generate_assignment", path.stem)
            answers = reference_answers(course, path.stem)
            students = [f"student{k:02d}" for k in range(args.students)]
            for student in students:
                hand_in(course, path.stem, student, answers)
            one = autograde_seconds(env, course, path.stem, f"--student={students[0]}")
            many = autograde_seconds(env, course, path.stem)  # every hand-in
            print(f"| {path.stem} | {one:.1f} | {many:.1f} | {many / args.students:.1f} |", flush=True)
    print("\nproduced by: python -m benchmarks.autograde_time --students", args.students,
          *(["--notebooks", *args.notebooks] if args.notebooks else []))
    return 0


if __name__ == "__main__":
    sys.exit(main())
