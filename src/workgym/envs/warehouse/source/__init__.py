"""Warehouse sources: read-only connections, typed row loading and the snapshot."""
