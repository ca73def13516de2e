"""The Ascend cube's views for ``isasim run`` and ``isasim step`` (see :mod:`.buffers`)."""

from .buffers import BY_ARRAY, VIEWS, item_view, state_view, step_view, watch_value

__all__ = ["BY_ARRAY", "VIEWS", "item_view", "state_view", "step_view", "watch_value"]
