"""Profile Lake: the pure logic (JSON merge, identity graph, generator) and the Spark plumbing."""

__version__ = "0.1.0"
