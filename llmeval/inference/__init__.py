"""Upstream (jianzhnie/LLMEval) entry points kept so existing scripts keep working."""
