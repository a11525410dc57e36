"""``kernelkit serve``: an HTTP server that speaks the Hugging Face Hub API over a hub directory.

A team runs it inside its own network; ``huggingface_hub``, upstream ``kernels`` and kernelkit's
``hf`` hub backend talk to it unchanged through ``HF_ENDPOINT``. The repositories are the local
hub's bare git repositories (``<hub>/<org>/<name>.git``), so ``kernelkit upload --hub DIR`` and
``git clone`` see the same data.

Nothing here is imported by ``import kernelkit``; ``starlette`` and ``uvicorn`` (the ``serve``
extra) are imported only by :mod:`kernelkit.serve.app` and :mod:`kernelkit.serve.server`.
"""
