"""Verification: the only home of math-verify and sympy; the policies and the worker pool."""
