"""The env contract: spaces, the TextEnv base class, tools, tasks, trajectories, info keys, errors.

This subpackage imports nothing else from papergym.
"""
