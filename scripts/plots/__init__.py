"""Plots of fabricbench results records, one module per kind (see scripts/plot.py)."""
