"""Loopback servers and fixtures shared by the tests, the stress scripts and the benchmarks."""
