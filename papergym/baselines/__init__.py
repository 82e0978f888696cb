"""Baseline trainers and the small shared pieces they need (DESIGN.md, "Trainers")."""
