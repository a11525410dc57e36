"""Build a variant no published one fits from the kernel's published sources (issue 29).

``api.py`` holds the public loaders with ``build_missing`` (``kernelkit.get_kernel`` & co);
``provider.py`` the variant provider the loader asks when nothing published fits;
``target.py`` what would be built here or why not (before any download); ``pack.py`` the
sources ``kernelkit upload`` publishes; ``explain.py`` what ``info``/``variants`` say.
This package sits above the loader and the builder (the loader never imports the builder).
"""
