"""The daemon's routers, one per resource."""
