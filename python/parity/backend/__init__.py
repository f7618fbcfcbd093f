"""Loaders and runners, one module per backend (Polygraphy's ``polygraphy.backend``)."""
