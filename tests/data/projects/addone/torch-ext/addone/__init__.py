from __future__ import annotations

import torch

from ._ops import add_op_namespace_prefix, ops
from .layers import AddOne


def add_one(x: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    if out is None:
        out = torch.empty_like(x)
    ops.add_one(out, x)
    return out


__all__ = ["AddOne", "add_one", "add_op_namespace_prefix"]
