"""The course's rim: code that tests, benchmarks and scripts share.

Import it from the clone's root (pytest puts the root on sys.path; run
benchmarks and scripts as `python -m benchmarks.NAME` / `python -m scripts.NAME`).
Nothing here is part of the helper package the notebooks import.
"""
