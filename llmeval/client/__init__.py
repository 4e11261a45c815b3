"""The chat client, the only home of httpx: the protocol, endpoints and retries, what a server
says about itself."""
