"""Publishing, the author's last stage (``kernelkit upload``): verified variants to a hub,
through the hub port only (the hub stays an adapter: it stores commits, it decides nothing)."""
