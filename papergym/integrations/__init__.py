"""Adapters to other trainers and to Ray. Each module imports its framework lazily (an optional extra)."""
