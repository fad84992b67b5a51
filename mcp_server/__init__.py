"""The MCP endpoint at {site_url}/mcp: its authentication (`endpoint`) and its tools (`tools`)."""
