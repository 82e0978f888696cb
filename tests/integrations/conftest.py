"""The backend tests' tiny checkpoint, shared with the integration tests."""

from tests.backends.conftest import tiny_checkpoint

__all__ = ["tiny_checkpoint"]
