"""The test harness: loopback OpenAI server, faults, fixtures."""
