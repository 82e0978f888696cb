"""``papergym reproduce NAME``: a paper's headline effect, reproduced in miniature by a policy that learns.

Each reproduction is a thin driver in ``papergym/reproduce/NAME.py`` over the trainers and envs (no
training code of its own); what they share (provenance, stratified bootstrap intervals, the verdict
against the paper's direction, ``results.json`` and the README section) lives in :mod:`.report`.
DESIGN.md §Reproductions states the rules: arms differ only in the mechanism, at least three seeds,
intervals on every figure, the paper's number beside ours, and a result reported as it comes out.
"""
