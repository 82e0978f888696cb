"""The backend tests' tiny checkpoint and one-thread torch setting, shared with the integration tests."""

from tests.backends.conftest import _one_torch_thread, tiny_checkpoint

__all__ = ["_one_torch_thread", "tiny_checkpoint"]
