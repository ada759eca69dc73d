"""The reader of dp_accounting event trees lives in :mod:`certify.event_tree` (a core module that neither
:mod:`certify.events` nor :mod:`certify.poisson` imports the other through); its names are re-exported here for
existing imports."""

from ..event_tree import MAX_EVENT_DEPTH, EventView, as_json, count_of, from_library, walk

__all__ = ["MAX_EVENT_DEPTH", "EventView", "as_json", "count_of", "from_library", "walk"]
