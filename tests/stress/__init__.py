"""Stress runs: kill storms, fault runs, hostile outputs, broken files."""
