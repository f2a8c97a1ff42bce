"""The MCP front door (needs the ``[mcp]`` extra): an agent reads, searches, asks and proposes;
a person approves. :mod:`affidavit.mcp.server` builds the server; nothing here imports ``mcp``."""
