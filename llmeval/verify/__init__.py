"""Verification: the only home of math-verify and sympy; policy, worker pool, verdict cache."""
