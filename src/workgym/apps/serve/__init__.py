"""Environments as network servers: HTTP + WebSocket sessions, MCP tools, and a client."""
